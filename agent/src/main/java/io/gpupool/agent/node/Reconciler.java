package io.gpupool.agent.node;

import io.gpupool.agent.link.DesiredState;
import io.gpupool.agent.link.JobStatusReport;
import io.gpupool.agent.run.GrantedGpu;
import io.gpupool.agent.run.JobEnd;
import io.gpupool.agent.run.JobKey;
import io.gpupool.agent.run.JobLaunch;
import io.gpupool.agent.run.JobPhase;
import io.gpupool.agent.run.JobRunner;
import io.gpupool.agent.run.RunningJob;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Makes the jobs running on this node match the server's desired state, and turns what happens to jobs
 * into status reports.
 *
 * <p>Rules, each of which keeps a job from running twice:
 * <ul>
 *   <li>a desired state older than the newest one applied is ignored (a late message cannot undo a newer
 *       decision); the same version again changes nothing;</li>
 *   <li>an attempt is started only if no directory of it exists ({@link io.gpupool.agent.run.JobStore}):
 *       one that ran before, however it ended, is never started again;</li>
 *   <li>what runs and is not desired is stopped;</li>
 *   <li>an attempt waits while an older attempt of the same job is still stopping, or while a job being
 *       stopped still holds a GPU it is granted exclusively (or one it would share with an exclusive
 *       holder): the server reassigns GPUs when it decides, the processes free them a grace period later.</li>
 * </ul>
 */
public final class Reconciler implements JobRunner.Listener {

    /** What one application did, for logs and tests. */
    public record Applied(long version, boolean stale, List<JobKey> started, List<JobKey> stopped, Map<JobKey, String> waiting) {}

    private final StatusBuffer statuses;
    private final LogShipper logs;
    private final AgentState state;
    private final Executor background;
    private final ExecutorService starts;
    private JobRunner runner;
    private DesiredState last;
    private volatile boolean someWaiting;
    /** Attempts whose start is queued or under way; changed under this lock, read without by {@link #startsUnderWay}. */
    private final Map<JobKey, Starting> starting = new ConcurrentHashMap<>();
    private boolean closing; // guarded by this
    private volatile Runnable onStartsDone = () -> { };

    /** A start not yet done; cancelled: the server stopped wanting it meanwhile. */
    private static final class Starting {
        final JobLaunch launch;
        boolean cancelled;

        Starting(JobLaunch launch) {
            this.launch = launch;
        }
    }

    /**
     * @param background where an ended job triggers another pass for the attempts waiting on it
     * @param starts     where the processes of a batch of new attempts are spawned side by side
     */
    Reconciler(StatusBuffer statuses, LogShipper logs, AgentState state, Executor background, ExecutorService starts) {
        this.statuses = statuses;
        this.logs = logs;
        this.state = state;
        this.background = background;
        this.starts = starts;
    }

    void attach(JobRunner runner) {
        this.runner = runner;
    }

    /** Starts queued or spawning (the loop holds its reports back meanwhile); takes no lock. */
    boolean startsUnderWay() {
        return !starting.isEmpty();
    }

    /** Called when the last start under way is done (the agent then reports the batch). */
    void onStartsDone(Runnable r) {
        this.onStartsDone = r;
    }

    /**
     * Applies a desired state from the server.
     *
     * @param waitForStarts return only once the new attempts' processes have been spawned (a test driving the
     *                      agent step by step); else they are spawned in the background and each is reported
     *                      the moment it runs, so the loop can fetch the next desired state meanwhile
     */
    public synchronized Applied apply(DesiredState desired, boolean waitForStarts) throws IOException {
        if (desired.version() < state.appliedDesiredVersion()) {
            return new Applied(desired.version(), true, List.of(), List.of(), Map.of());
        }
        last = desired;
        state.applied(desired.version());
        return reconcile(waitForStarts);
    }

    /** Applies the last desired state again: attempts that were waiting for GPUs may start now. */
    synchronized Applied reapply(boolean waitForStarts) {
        if (last == null) return new Applied(state.appliedDesiredVersion(), false, List.of(), List.of(), Map.of());
        return reconcile(waitForStarts);
    }

    private Applied reconcile(boolean waitForStarts) {
        Map<JobKey, JobLaunch> wanted = new LinkedHashMap<>();
        for (JobLaunch l : last.jobs()) wanted.putIfAbsent(l.key(), l);
        List<JobKey> stopped = new ArrayList<>();
        for (RunningJob r : runner.running()) {
            if (!wanted.containsKey(r.key()) && !r.stopping()) {
                runner.stop(r.key(), JobPhase.STOPPED, stopReason());
                stopped.add(r.key());
            }
        }
        // a start still queued or under way for an attempt no longer wanted: skipped, or stopped once spawned
        for (Starting st : starting.values()) st.cancelled = !wanted.containsKey(st.launch.key());
        List<JobLaunch> toStart = new ArrayList<>();
        Map<JobKey, String> waiting = new LinkedHashMap<>();
        for (JobLaunch l : wanted.values()) {
            JobKey key = l.key();
            if (starting.containsKey(key) || runner.get(key).isPresent() || runner.store().started(key)) continue;
            String conflict = conflict(l);
            if (conflict != null) {
                waiting.put(key, conflict);
                continue;
            }
            toStart.add(l);
        }
        someWaiting = !waiting.isEmpty();
        return new Applied(last.version(), false, startAll(toStart, waitForStarts), stopped, waiting);
    }

    private String stopReason() {
        return "stopped: the server no longer wants it (desired state " + last.version() + ")";
    }

    /**
     * Starts the new attempts side by side: spawning a process mostly waits for the kernel (fork, exec), so a
     * burst of work for this node starts in a fraction of the time one after the other would take. They do
     * not conflict with each other: the server never grants one GPU to two of them beyond its sharing rules.
     * Until its process runs, an attempt is in {@link #starting}, where {@link #conflict} sees it as holding
     * its GPUs and the next reconciliation neither starts it again nor forgets to stop it.
     *
     * @return the attempts started (with {@code waitForStarts}), else those whose start was queued
     */
    private List<JobKey> startAll(List<JobLaunch> launches, boolean waitForStarts) {
        List<JobKey> started = new ArrayList<>();
        if (launches.isEmpty()) return started;
        List<Future<JobRunner.StartResult>> results = new ArrayList<>();
        for (JobLaunch l : launches) {
            starting.put(l.key(), new Starting(l));
            try {
                results.add(starts.submit(() -> startOne(l)));
            } catch (RejectedExecutionException e) {
                starting.remove(l.key()); // the agent is closing: the next agent on this directory starts it
            }
        }
        if (!waitForStarts) {
            for (int i = 0; i < results.size(); i++) started.add(launches.get(i).key());
            return started;
        }
        // the spawning threads take this lock when they finish: wait without holding it
        boolean interrupted = false;
        for (int i = 0; i < results.size(); i++) {
            try {
                JobRunner.StartResult r = awaitUnlocked(results.get(i));
                if (r instanceof JobRunner.StartResult.Started) started.add(launches.get(i).key());
            } catch (ExecutionException e) {
                // a start that threw recorded nothing: the attempt is tried again at the next pass
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) Thread.currentThread().interrupt();
        return started;
    }

    private <T> T awaitUnlocked(Future<T> f) throws ExecutionException, InterruptedException {
        while (true) {
            try {
                return f.get(0, TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                wait(5); // releases this monitor while the spawn finishes
            }
        }
    }

    /** On a spawning thread: the process, unless the attempt was cancelled (or the agent closes) before it. */
    private JobRunner.StartResult startOne(JobLaunch l) {
        JobKey key = l.key();
        boolean skip;
        boolean done = false;
        synchronized (this) {
            Starting st = starting.get(key);
            skip = st == null || st.cancelled || closing;
            if (skip) {
                starting.remove(key);
                done = starting.isEmpty();
            }
        }
        if (skip) {
            if (someWaiting) background.execute(() -> reapply(false)); // it held GPUs in conflict()'s view
            if (done) onStartsDone.run();
            return new JobRunner.StartResult.Failed(key, "not started: no longer wanted");
        }
        JobRunner.StartResult r = null;
        try {
            r = runner.start(l);
            return r;
        } finally {
            boolean cancelled;
            String reason;
            synchronized (this) {
                Starting st = starting.remove(key);
                cancelled = st != null && st.cancelled && !closing;
                reason = last == null ? null : stopReason();
                done = starting.isEmpty();
                notifyAll();
            }
            if (done) onStartsDone.run();
            // stopped like any unwanted job; its end triggers the pass for the attempts waiting on it
            if (cancelled && r instanceof JobRunner.StartResult.Started) runner.stop(key, JobPhase.STOPPED, reason);
            else if (cancelled && someWaiting) background.execute(() -> reapply(false));
        }
    }

    /** Lets the starts under way finish and skips the queued ones (closing: the next agent starts them). */
    void drainStarts(java.time.Duration wait) {
        synchronized (this) {
            closing = true;
        }
        starts.shutdown();
        try {
            starts.awaitTermination(wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Why {@code l} must wait for a running (or starting) job, or null if it need not. */
    private String conflict(JobLaunch l) {
        List<JobLaunch> holders = new ArrayList<>();
        for (RunningJob r : runner.running()) holders.add(r.launch());
        for (Starting st : starting.values()) holders.add(st.launch);
        for (JobLaunch h : holders) {
            if (h.jobId().equals(l.jobId())) return "attempt " + h.attempt() + " of the job is still running";
            for (GrantedGpu mine : l.gpus()) {
                for (GrantedGpu theirs : h.gpus()) {
                    if (mine.uuid().equals(theirs.uuid()) && (mine.whole() || theirs.whole())) {
                        return "GPU " + mine.uuid() + " is still held by " + h.key();
                    }
                }
            }
        }
        return null;
    }

    @Override
    public void started(RunningJob job) {
        logs.track(job.key());
        statuses.add(job.key(), JobPhase.RUNNING, null, job.pid(), job.startedAtMs(), null, "started");
    }

    @Override
    public void ended(JobLaunch launch, JobEnd end) {
        logs.track(launch.key()); // output of a job that ended while the agent was down still goes out
        statuses.add(launch.key(), end.phase(), end.exitCode(), null, end.startedAtMs(), end.endedAtMs(), end.message());
        if (someWaiting) background.execute(() -> reapply(false));
    }

    @Override
    public void warning(RunningJob job, String message) {
        statuses.add(job.key(), JobPhase.RUNNING, null, job.pid(), job.startedAtMs(), null, "warning: " + message);
    }

    /** The unacknowledged reports (for tests and the CLI). */
    List<JobStatusReport> pendingStatuses() {
        return statuses.pending(Integer.MAX_VALUE);
    }
}
