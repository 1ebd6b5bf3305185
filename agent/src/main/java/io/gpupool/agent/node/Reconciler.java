package io.gpupool.agent.node;

import io.gpupool.agent.protocol.DesiredState;
import io.gpupool.agent.protocol.GrantedGpu;
import io.gpupool.agent.protocol.JobKey;
import io.gpupool.agent.protocol.JobLaunch;
import io.gpupool.agent.protocol.JobPhase;
import io.gpupool.agent.protocol.JobStatusReport;
import io.gpupool.agent.run.JobDirectory;
import io.gpupool.agent.run.JobEnd;
import io.gpupool.agent.run.JobRunner;
import io.gpupool.agent.run.RunningJob;
import io.gpupool.model.GpuShare;

import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.function.BooleanSupplier;

/**
 * Makes the jobs running on this node match the server's desired state, and turns what happens to jobs
 * into status reports.
 *
 * <p>Rules, each of which keeps a job from running twice:
 * <ul>
 *   <li>a desired state older than the newest one applied is ignored (a late message cannot undo a newer
 *       decision); the same version again changes nothing;</li>
 *   <li>an attempt is started only if no directory of it exists ({@link io.gpupool.agent.run.JobStore}):
 *       one that ran before, however it ended, is never started again (its recorded end is reported again instead,
 *       for a server that lost it with a restored store);</li>
 *   <li>what runs and is not desired is stopped, also an attempt whose job id and number the server now gives a job
 *       submitted at another instant (a restored store gives out again the ids of jobs submitted after its backup);</li>
 *   <li>an attempt waits while an older attempt of the same job (or an attempt of an earlier job with its id) is still
 *       stopping, or while a job being
 *       stopped still holds a GPU it is granted exclusively (or one it would share with an exclusive
 *       holder): the server reassigns GPUs when it decides, the processes free them a grace period later;</li>
 *   <li>nothing starts while the node's lease has run out ({@link Lease}): the server may have declared the node
 *       lost and placed the attempt elsewhere.</li>
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
    private final BooleanSupplier leaseValid;
    private JobRunner runner;
    private DesiredState last;
    private volatile boolean someWaiting;
    /** Ended attempts whose end was reported again, with the desired-state version that listed them. */
    private final Map<JobKey, Long> endReportedAgain = new HashMap<>();

    /**
     * @param background where an ended job triggers another pass for the attempts waiting on it
     * @param starts     where the processes of a batch of new attempts are spawned side by side
     * @param leaseValid whether the node's lease is valid now: asked again right before each start
     */
    Reconciler(StatusBuffer statuses, LogShipper logs, AgentState state, Executor background, ExecutorService starts,
               BooleanSupplier leaseValid) {
        this.statuses = statuses;
        this.logs = logs;
        this.state = state;
        this.background = background;
        this.starts = starts;
        this.leaseValid = leaseValid;
    }

    void attach(JobRunner runner) {
        this.runner = runner;
    }

    /** Applies a desired state from the server. */
    public synchronized Applied apply(DesiredState desired) throws IOException {
        if (desired.version() < state.appliedDesiredVersion()) {
            return new Applied(desired.version(), true, List.of(), List.of(), Map.of());
        }
        last = desired;
        state.applied(desired.version());
        return reconcile();
    }

    /** Applies the last desired state again: attempts that were waiting for GPUs may start now. */
    public synchronized Applied reapply() {
        if (last == null) return new Applied(state.appliedDesiredVersion(), false, List.of(), List.of(), Map.of());
        return reconcile();
    }

    private Applied reconcile() {
        Map<JobKey, JobLaunch> wanted = new LinkedHashMap<>();
        for (JobLaunch l : last.jobs()) wanted.putIfAbsent(l.key(), l);
        List<JobKey> stopped = new ArrayList<>();
        List<RunningJob> running = List.copyOf(runner.running());
        for (RunningJob r : running) {
            if (r.stopping() || wanted.containsKey(r.key())) continue;
            JobLaunch sameAttempt = sameAttempt(wanted.values(), r.key());
            if (sameAttempt != null && sameAttempt.key().matches(r.key())) continue; // one side does not know the submit instant: as before
            runner.stop(r.key(), JobPhase.STOPPED, sameAttempt == null
                    ? "stopped: the server no longer wants it (desired state " + last.version() + ")"
                    : "stopped: the server no longer knows this job; its id and attempt now name a job submitted at "
                    + Instant.ofEpochMilli(sameAttempt.submittedMs()) + " (was the server's store restored from a backup?)");
            stopped.add(r.key());
        }
        List<JobLaunch> toStart = new ArrayList<>();
        Map<JobKey, String> waiting = new LinkedHashMap<>();
        for (JobLaunch l : wanted.values()) {
            JobKey key = l.key();
            if (running.stream().anyMatch(r -> r.key().matches(key))) continue;
            if (runner.store().started(key)) {
                reportEndAgain(key);
                continue;
            }
            String conflict = leaseValid.getAsBoolean() ? conflict(l) : LEASE_RAN_OUT;
            if (conflict != null) {
                waiting.put(key, conflict);
                continue;
            }
            toStart.add(l);
        }
        someWaiting = !waiting.isEmpty();
        endReportedAgain.keySet().retainAll(wanted.keySet());
        return new Applied(last.version(), false, startAll(toStart), stopped, waiting);
    }

    /**
     * Starts the new attempts side by side: spawning a process mostly waits for the kernel (fork, exec), so a
     * burst of work for this node starts in a fraction of the time one after the other would take. They do
     * not conflict with each other: the server never grants one GPU to two of them beyond its sharing rules.
     */
    private List<JobKey> startAll(List<JobLaunch> launches) {
        List<JobKey> started = new ArrayList<>();
        if (launches.size() <= 1) {
            for (JobLaunch l : launches) if (startIfLeased(l) instanceof JobRunner.StartResult.Started) started.add(l.key());
            return started;
        }
        List<Future<JobRunner.StartResult>> results = new ArrayList<>();
        for (JobLaunch l : launches) results.add(starts.submit(() -> startIfLeased(l)));
        for (int i = 0; i < launches.size(); i++) {
            try {
                if (results.get(i).get() instanceof JobRunner.StartResult.Started) started.add(launches.get(i).key());
            } catch (ExecutionException e) {
                // a start that threw recorded nothing: the attempt is tried again at the next pass
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        return started;
    }

    /** The listed launch of the same job id and attempt number as {@code key}, of whichever job; null if none. */
    private static JobLaunch sameAttempt(Collection<JobLaunch> wanted, JobKey key) {
        for (JobLaunch l : wanted) if (l.key().sameAttempt(key)) return l;
        return null;
    }

    /**
     * The server lists an attempt that ran here and ended. That happens when its store was restored from a backup taken
     * before the attempt ran (the job was queued then, or running): the server waits for an end it heard of and forgot.
     * The attempt is not started again (at most once); its recorded end and its output are reported again, once per
     * desired state that lists it, so the job ends as it did. An older agent's directory, which does not name its job,
     * is not reported: its end may be another job's.
     */
    private void reportEndAgain(JobKey key) {
        if (key.submittedMs() == null || endReportedAgain.get(key) instanceof Long v && v == last.version()) return;
        if (statuses.pendingAbout(key)) return; // the server has yet to hear of the end: this desired state came before
        Optional<JobDirectory> dir = runner.store().find(key);
        if (dir.isEmpty()) return;
        Optional<JobEnd> end;
        try {
            end = dir.get().outcome();
        } catch (IOException e) {
            return; // unreadable now; the next desired state tries again
        }
        if (end.isEmpty()) return; // not ended: it runs, or a restarted agent has yet to recover it
        endReportedAgain.put(key, last.version());
        logs.track(key);
        JobEnd e = end.get();
        statuses.add(key, e.phase(), e.exitCode(), null, e.startedAtMs(), e.endedAtMs(), e.message());
    }

    static final String LEASE_RAN_OUT = "the node's lease has run out: nothing starts until the server applies a report again";

    /** Starts the attempt if the lease is still valid at this very moment (a start may wait in the pool); else null. */
    private JobRunner.StartResult startIfLeased(JobLaunch l) {
        return leaseValid.getAsBoolean() ? runner.start(l) : null;
    }

    /**
     * Why {@code l} must wait for a running job, or null if it need not: an attempt of the same job still runs, or
     * one of its GPUs would hold more than all of its compute together with the jobs still on it (only a job the
     * server released and that is still stopping can make it so: the server never grants more than a GPU has).
     */
    private String conflict(JobLaunch l) {
        List<RunningJob> running = List.copyOf(runner.running());
        for (RunningJob r : running) {
            if (!r.key().jobId().equals(l.jobId())) continue;
            if (r.key().submittedMs() == null || l.submittedMs() == null || r.key().submittedMs().equals(l.submittedMs())) {
                return "attempt " + r.key().attempt() + " of the job is still running";
            }
            return "attempt " + r.key().attempt() + " of an earlier job with this id (submitted at "
                    + Instant.ofEpochMilli(r.key().submittedMs()) + ") is still stopping";
        }
        for (GrantedGpu mine : l.gpus()) {
            int milli = mine.milli();
            RunningJob holder = null;
            for (RunningJob r : running) {
                for (GrantedGpu theirs : r.launch().gpus()) {
                    if (!mine.uuid().equals(theirs.uuid())) continue;
                    milli += theirs.milli();
                    if (holder == null || r.stopping()) holder = r;
                }
            }
            if (milli > GpuShare.WHOLE) return "GPU " + mine.uuid() + " is still held by " + holder.key();
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
        if (someWaiting) background.execute(this::reapply);
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
