package io.gpupool.agent.run;

import io.gpupool.agent.confine.AttemptCgroup;
import io.gpupool.agent.confine.Confinement;
import io.gpupool.agent.confine.DeviceNodes;
import io.gpupool.agent.gpu.GpuLoad;
import io.gpupool.agent.protocol.GpuInfo;
import io.gpupool.agent.protocol.GpuSample;
import io.gpupool.agent.protocol.GrantedGpu;
import io.gpupool.agent.protocol.JobKey;
import io.gpupool.agent.protocol.JobLaunch;
import io.gpupool.agent.protocol.JobPhase;
import io.gpupool.model.SpecException;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Starts, watches and stops the processes of jobs on this node.
 *
 * <p>A job runs in a {@link JobWrapper} (the native {@code gpupool-jobwrap}, or a shell), started by {@link JobSpawner} as
 * the leader of a new session and process group (posix_spawn with POSIX_SPAWN_SETSID, or setsid under the JDK's
 * ProcessBuilder where libc lacks it), so stopping it reaches every process it forked; the wrapper
 * writes its pid first and the command's exit code last into the job directory, so an agent that restarts
 * while the job runs can re-adopt it and still learn how it ended. The job writes its output straight into
 * the job directory's log files; nothing passes through the agent, so a busy or restarting agent never
 * blocks a job.
 *
 * <p>Stopping: the stop notice ({@link StopNotice}) first, then SIGTERM to the group, then SIGKILL after the grace
 * period if the wrapper still lives. When the wrapper has ended, whatever is left of the group is killed, so the GPUs
 * are really free. A launch with a time limit is stopped that way at its start plus the limit (phase TIMEOUT), by this
 * agent process or, after a restart, by the next one.
 *
 * <p>Confinement (where the node has cgroups, {@link Confinement}): each attempt gets its own cgroups, made before
 * the process starts, with the job's CPU, memory, pids and device limits; the wrapper joins them before it runs the
 * command, so nothing the job forks escapes them, not even a daemon in a session of its own. SIGKILL and the clean-up
 * after the wrapper ended kill the whole cgroup; then it is removed.
 */
public final class JobRunner implements GpuLoad, AutoCloseable {

    /** What happens to jobs, for the status reports. Called from process-watching threads. */
    public interface Listener {
        void started(RunningJob job);

        /** An attempt ended (or was found ended after a restart, or could not start). */
        void ended(JobLaunch launch, JobEnd end);

        void warning(RunningJob job, String message);
    }

    /** What {@link #start} did. */
    public sealed interface StartResult {
        /** The process runs. */
        record Started(RunningJob job) implements StartResult {}

        /** This attempt was started on this node before (now or earlier): nothing was done. */
        record AlreadyStarted(JobKey key) implements StartResult {}

        /** It could not start; the end (FAILED, with the reason) was recorded and reported. */
        record Failed(JobKey key, String reason) implements StartResult {}
    }

    private final RunnerConfig config;
    private final JobStore store;
    private final Map<String, GpuInfo> gpusByUuid;
    private final Listener listener;
    private final ScheduledExecutorService timer;
    /** Runs the end of a job off the reaping threads (ChildReaper's, the JDK's), which must stay free to reap. */
    private final ExecutorService watchers = Executors.newVirtualThreadPerTaskExecutor();
    private final Map<JobKey, RunningJob> running = new ConcurrentHashMap<>();
    private final Map<String, Boolean> memoryWarned = new ConcurrentHashMap<>();
    private final Map<JobKey, ScheduledFuture<?>> timeLimits = new ConcurrentHashMap<>();
    private final JobSpawner spawner;
    private final JobWrapper wrapper;
    private final AccountSwitch accounts;
    private final Confinement confinement;

    /** A runner without cgroups (jobs are plain process groups). */
    public JobRunner(RunnerConfig config, List<GpuInfo> gpus, Listener listener) throws IOException {
        this(config, gpus, listener, Confinement.off("not configured", DeviceNodes.system()));
    }

    public JobRunner(RunnerConfig config, List<GpuInfo> gpus, Listener listener, Confinement confinement) throws IOException {
        this(config, gpus, listener, confinement, JobSpawner.forThisMachine(), JobWrapper.forThisMachine(config.workDir(), config.wrapper()));
    }

    JobRunner(RunnerConfig config, List<GpuInfo> gpus, Listener listener, Confinement confinement, JobSpawner spawner,
              JobWrapper wrapper) throws IOException {
        this.spawner = spawner;
        this.wrapper = wrapper;
        this.confinement = confinement;
        this.config = config;
        this.accounts = new AccountSwitch(wrapper.cannotSwitchReason(), config.unboundAccount(), config.allowRootJobs());
        this.store = new JobStore(config.workDir());
        this.gpusByUuid = gpus.stream().collect(Collectors.toUnmodifiableMap(GpuInfo::uuid, Function.identity()));
        this.listener = listener;
        ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, r -> Thread.ofPlatform().daemon().name("gpupool-job-timer").unstarted(r));
        t.setRemoveOnCancelPolicy(true); // a job's time-limit task goes when the job ends, not days later
        this.timer = t;
    }

    public JobStore store() {
        return store;
    }

    public RunnerConfig config() {
        return config;
    }

    /** Whether jobs run as their own Unix accounts here, and why not when they do not. */
    public AccountSwitch accounts() {
        return accounts;
    }

    public Confinement confinement() {
        return confinement;
    }

    /** How jobs are started on this node (posix_spawn, or ProcessBuilder and why; which wrapper), for the agent's start message. */
    public String spawnMethod() {
        return spawner.description() + ", in " + wrapper.description();
    }

    /** Starts one attempt unless it was started on this node before. */
    public StartResult start(JobLaunch launch) {
        JobKey key = launch.key();
        if (running.containsKey(key)) return new StartResult.AlreadyStarted(key);
        Optional<JobDirectory> created;
        try {
            created = store.create(launch);
        } catch (IOException e) {
            // Nothing was recorded, so nothing ran: the server may ask again.
            return new StartResult.Failed(key, "cannot create the job directory: " + e.getMessage());
        }
        if (created.isEmpty()) return new StartResult.AlreadyStarted(key);
        JobDirectory dir = created.get();
        long now = System.currentTimeMillis();
        AttemptCgroup cgroup = null;
        try {
            AccountSwitch.Plan plan = accounts.plan(launch);
            if (plan instanceof AccountSwitch.Plan.Refuse r) throw new SpecException("job " + key, "run_as", r.reason());
            Map<String, String> env = JobEnvironment.of(launch, gpusByUuid, System.getenv(), config.passThroughEnv());
            env.putAll(StopNotice.environment(dir, config.killGrace()));
            List<Integer> minors = launch.gpus().stream().map(g -> gpusByUuid.get(g.uuid()).deviceMinor()).toList();
            if (!minors.isEmpty()) {
                env.put("GPUPOOL_DEVICE_NODES", String.join(",", minors.stream().map(m -> confinement.devices().gpuNode(m).toString()).toList()));
            }
            Path workDir = launch.workDir() == null ? dir.path() : Path.of(launch.workDir());
            JobWrapper.Call call;
            if (plan instanceof AccountSwitch.Plan.Switch s) {
                UnixAccount a = s.account();
                env.putAll(Map.of("HOME", a.home(), "USER", a.name(), "LOGNAME", a.name()));
                // the account enters its directory itself (a directory it may not enter stays closed to it)
                boolean ownDir = launch.workDir() == null;
                call = wrapper.asAccount(dir, launch.command(), env, ownDir ? dir.work() : workDir, ownDir, a, s.groups());
            } else if (!Files.isDirectory(workDir)) {
                throw new SpecException("job " + key, "work_dir", "directory " + workDir + " does not exist");
            } else {
                call = wrapper.asAgent(dir, launch.command(), env, workDir);
            }
            cgroup = confine(launch, dir, minors);
            JobSpawner.Spawned p = spawner.spawn(call, dir);
            try {
                dir.writeProcess(p.handle().pid(), p.startInstant(), now);
            } catch (IOException e) {
                // The job runs regardless; after a restart the wrapper's own pid file identifies it.
            }
            RunningJob job = new RunningJob(launch, dir, p.handle(), p.exitValue(), now, p.ownSession(), cgroup);
            running.put(key, job);
            listener.started(job);
            watchTimeLimit(job);
            p.exitValue().whenCompleteAsync((c, t) -> ended(job), watchers);
            return new StartResult.Started(job);
        } catch (IOException | SpecException e) {
            if (cgroup != null) cgroup.release(GROUP_GONE_WAIT_NANOS); // nothing joined it
            String reason = "cannot start: " + e.getMessage();
            record(dir, new JobEnd(JobPhase.FAILED, null, now, System.currentTimeMillis(), reason), launch);
            return new StartResult.Failed(key, reason);
        }
    }

    /**
     * The attempt's cgroups with its limits, recorded in its directory for the wrapper to join; null where the node
     * confines nothing. Host CPU and memory come from the launch (none asked: no such limit).
     */
    private AttemptCgroup confine(JobLaunch launch, JobDirectory dir, List<Integer> gpuMinors) throws IOException {
        long cpu = launch.host() == null ? 0 : launch.host().cpuMilli();
        long mem = launch.host() == null ? 0 : launch.host().memoryMib();
        Optional<AttemptCgroup> made;
        try {
            made = confinement.create(dir.path().getFileName().toString(), cpu, mem, gpuMinors);
        } catch (IOException e) {
            throw new IOException("cannot set up its cgroup: " + e.getMessage(), e);
        }
        if (made.isEmpty()) return null;
        try {
            made.get().writeRecord(dir.path());
        } catch (IOException e) {
            made.get().release(GROUP_GONE_WAIT_NANOS);
            throw e;
        }
        return made.get();
    }

    /** The groups an earlier agent process made for this attempt; null without (or with an unreadable) record. */
    private static AttemptCgroup recordedCgroup(JobDirectory dir, JobLaunch launch) {
        try {
            return AttemptCgroup.read(dir.path(), launch.host() == null ? 0 : launch.host().memoryMib()).orElse(null);
        } catch (IOException | RuntimeException e) {
            return null; // the job is still watched by its process group; only the cgroup clean-up is lost
        }
    }

    /**
     * After an agent restart: takes back every attempt whose directory has no outcome. A process that still
     * runs (same pid, same start time, our wrapper for this directory) is watched again; one that ended
     * while the agent was down is reported with the exit code its wrapper left (LOST when it left none).
     *
     * @return the re-adopted jobs
     */
    public List<RunningJob> recover() throws IOException {
        List<RunningJob> adopted = new ArrayList<>();
        for (JobDirectory dir : store.all()) {
            if (dir.outcome().isPresent()) continue;
            JobLaunch launch;
            try {
                launch = dir.launch();
            } catch (IOException e) {
                continue; // a directory without a readable launch.json was never started (crash while creating it)
            }
            if (running.containsKey(launch.key())) continue;
            Optional<JobDirectory.ProcessRecord> rec = dir.process();
            Optional<ProcessHandle> alive = rec.flatMap(r -> JobWrapper.sameProcess(r, dir));
            AttemptCgroup cgroup = recordedCgroup(dir, launch);
            if (alive.isPresent()) {
                RunningJob job = new RunningJob(launch, dir, alive.get(), null, rec.get().startedAtMs(),
                        ProcFs.sessionId(alive.get().pid()).orElse(-1) == alive.get().pid(), cgroup);
                running.put(job.key(), job);
                adopted.add(job);
                watchTimeLimit(job); // from the launch record and the recorded start: the limit outlives the agent
                alive.get().onExit().whenCompleteAsync((h, t) -> ended(job), watchers);
            } else {
                long startedAt = rec.map(JobDirectory.ProcessRecord::startedAtMs).orElse(System.currentTimeMillis());
                long oomKills = cgroup == null ? 0 : cgroup.release(GROUP_GONE_WAIT_NANOS);
                Optional<Integer> code = dir.exitCode();
                long endedAt = code.isPresent() ? lastModified(dir.path().resolve(JobDirectory.EXIT)) : System.currentTimeMillis();
                JobEnd end = fencedByKeeper(dir)
                        ? new JobEnd(JobPhase.STOPPED, code.orElse(null), startedAt, endedAt, FENCED_BY_KEEPER + " while the agent was down")
                        : oomKills > 0 && code.orElse(-1) != 0
                        ? JobEnd.outOfMemory(cgroup.memoryLimitMib(), oomKills, code.orElse(null), startedAt, endedAt, " (ended while the agent was down)")
                        : code.map(c -> JobEnd.ofExitCode(c, startedAt, endedAt, " (ended while the agent was down)"))
                        .orElseGet(() -> new JobEnd(JobPhase.LOST, null, startedAt, endedAt, rec.isEmpty()
                                ? "the agent stopped before the process started"
                                : "ended while the agent was down and left no exit code"));
                record(dir, end, launch);
            }
        }
        return adopted;
    }

    /**
     * Stops a job: SIGTERM to its process group, SIGKILL after the grace period.
     *
     * @param phase  STOPPED (the server no longer wants it), FAILED (the agent's own verdict, e.g. memory) or TIMEOUT
     *               (its time limit)
     * @param reason why, for the report
     * @return false if no such job runs
     */
    public boolean stop(JobKey key, JobPhase phase, String reason) {
        return stop(key, phase, reason, config.killGrace());
    }

    /** The same, with another grace period (fencing, which must be done before the server's timeout). */
    public boolean stop(JobKey key, JobPhase phase, String reason, Duration grace) {
        RunningJob job = running.get(key);
        if (job == null) return false;
        if (!job.requestStop(phase, reason)) return true;
        try {
            StopNotice.write(job.directory(), new StopNotice(reason, phase, System.currentTimeMillis() + grace.toMillis(), grace.toSeconds()));
        } catch (IOException e) {
            // the SIGTERM still comes; only the notice is missing
        }
        signal(job, ProcessSignals.SIGTERM);
        timer.schedule(() -> {
            if (job.handle().isAlive()) {
                job.markKilled(grace);
                signal(job, ProcessSignals.SIGKILL);
                killCgroup(job);
            }
        }, grace.toMillis(), TimeUnit.MILLISECONDS);
        return true;
    }

    /** Stops the job at its start on this node plus its time limit, if it has one (at once if that has passed). */
    private void watchTimeLimit(RunningJob job) {
        Long limit = job.launch().timeLimitMs();
        if (limit == null) return;
        long delay = Math.max(0, job.startedAtMs() + limit - System.currentTimeMillis());
        String reason = "timeout: time limit " + io.gpupool.model.TimeLimit.format(Math.ceilDiv(limit, 1000)) + " reached";
        timeLimits.put(job.key(), timer.schedule(() -> stop(job.key(), JobPhase.TIMEOUT, reason), delay, TimeUnit.MILLISECONDS));
    }

    /** SIGKILL to everything in the job's cgroups, processes outside its process group included. */
    private static void killCgroup(RunningJob job) {
        if (job.cgroup() == null) return;
        try {
            job.cgroup().killAll();
        } catch (IOException e) {
            // the wrapper's end runs the clean-up again
        }
    }

    public Collection<RunningJob> running() {
        return List.copyOf(running.values());
    }

    public Optional<RunningJob> get(JobKey key) {
        return Optional.ofNullable(running.get(key));
    }

    public Map<String, GpuInfo> gpus() {
        return gpusByUuid;
    }

    /** The GPU shares the running jobs hold, for the fake backend's telemetry. */
    @Override
    public List<Use> currentUse() {
        List<Use> uses = new ArrayList<>();
        for (RunningJob j : running.values()) {
            for (GrantedGpu g : j.launch().gpus()) {
                GpuInfo gpu = gpusByUuid.get(g.uuid());
                long mem = g.whole() || gpu == null ? g.memoryMib() : g.memoryOn(gpu.memoryTotalMib());
                uses.add(new Use(g.uuid(), j.pid(), g.milli(), mem));
            }
        }
        return uses;
    }

    /**
     * Applies the memory policy to what the GPUs report: a job whose processes hold more than their grant
     * (plus the allowance) on a GPU is warned about once, or stopped, as configured.
     */
    public void enforceMemory(List<io.gpupool.agent.protocol.GpuSample> samples) {
        for (MemoryGuard.Violation v : MemoryGuard.check(samples, running.values(), gpusByUuid, config.memoryAllowanceMib())) {
            String what = v.describe();
            if (config.memoryPolicy() == RunnerConfig.MemoryPolicy.KILL) {
                stop(v.job().key(), JobPhase.FAILED, "killed: " + what);
            } else if (memoryWarned.putIfAbsent(v.job().key() + "/" + v.gpuUuid(), true) == null) {
                listener.warning(v.job(), what);
            }
        }
    }

    /** The process has ended (or was found ended): work out how, record it, report it. */
    private void ended(RunningJob job) {
        boolean leftovers = false;
        if (job.ownSession()) {
            // Background processes the command left behind would still hold GPU memory; the attempt has ended
            // only when none is left (the server may start it elsewhere once it hears of the end)
            leftovers = ProcessSignals.signalGroup(job.pid(), 0) && ProcFs.groupHasLiveMember(job.pid());
            ProcessSignals.signalGroup(job.pid(), ProcessSignals.SIGKILL);
            ProcessSignals.awaitGroupGone(job.pid(), GROUP_GONE_WAIT_NANOS);
        }
        long oomKills = 0;
        if (job.cgroup() != null) {
            // what left the process group (setsid, a double fork) is still in the cgroup: killed here, then removed
            leftovers |= !job.cgroup().empty();
            oomKills = job.cgroup().release(GROUP_GONE_WAIT_NANOS);
        }
        // when it ended: the wrapper wrote the exit code then, unless processes of the job lived on until just now
        // (an agent that was paused or busy sees the end later than it happened)
        Path exit = job.directory().path().resolve(JobDirectory.EXIT);
        // (file times come from a coarse clock that may lag the start time by a few ms: never before the start)
        long now = System.currentTimeMillis();
        if (!leftovers && Files.exists(exit)) now = Math.clamp(lastModified(exit), job.startedAtMs(), now);
        Integer code = null;
        try {
            code = job.directory().exitCode().orElse(null);
        } catch (IOException e) {
            // fall back to the process's own status
        }
        if (code == null) code = job.reapedExitValue().orElse(null);
        JobEnd end;
        if (fencedByKeeper(job.directory())) {
            // the keeper came first (it skips a job whose wrapper has already recorded an end)
            end = new JobEnd(JobPhase.STOPPED, code, job.startedAtMs(), now, FENCED_BY_KEEPER);
        } else if (job.stopPhase() != null) {
            String how = job.killed() ? "killed with SIGKILL after a grace period of " + text(job.killedAfter())
                    : "exited after SIGTERM" + (code == null ? "" : " with code " + code);
            end = new JobEnd(job.stopPhase(), code, job.startedAtMs(), now, job.stopReason() + "; " + how);
        } else if (Files.exists(job.directory().path().resolve(JobWrapper.UNCONFINED))) {
            end = new JobEnd(JobPhase.FAILED, code, job.startedAtMs(), now, "cannot start: its wrapper could not join the cgroup "
                    + readQuietly(job.directory().path().resolve(JobWrapper.UNCONFINED)) + " (the wrapper's reason is in its stderr)");
        } else if (oomKills > 0 && (code == null || code != 0)) {
            end = JobEnd.outOfMemory(job.cgroup().memoryLimitMib(), oomKills, code, job.startedAtMs(), now, "");
        } else if (code == null) {
            end = new JobEnd(JobPhase.FAILED, null, job.startedAtMs(), now,
                    "its wrapper was killed outside the agent; exit code unknown");
        } else {
            end = JobEnd.ofExitCode(code, job.startedAtMs(), now, "");
        }
        // Off the running list first, so whoever hears of the end sees the job's GPUs as released.
        running.remove(job.key());
        ScheduledFuture<?> limit = timeLimits.remove(job.key());
        if (limit != null) limit.cancel(false);
        memoryWarned.keySet().removeIf(k -> k.startsWith(job.key() + "/"));
        record(job.directory(), end, job.launch());
        job.end().complete(end);
    }

    static final String FENCED_BY_KEEPER = "fenced: the node's lease ran out and the fence keeper stopped the job";
    /** How long an ended job's process group may take to vanish after SIGKILL (a process in the kernel, e.g. a GPU driver call). */
    private static final long GROUP_GONE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(10);

    private static boolean fencedByKeeper(JobDirectory dir) {
        return Files.exists(dir.path().resolve(FenceKeeper.FENCED));
    }

    private static String text(Duration d) {
        return d.toMillis() % 1000 == 0 ? d.toSeconds() + " s" : d.toMillis() + " ms";
    }

    /** Reports the end first, then marks the directory done: a crash in between reports it twice, never not at all. */
    private void record(JobDirectory dir, JobEnd end, JobLaunch launch) {
        listener.ended(launch, end);
        try {
            dir.writeOutcome(end);
        } catch (IOException e) {
            // The report is out; after a restart the directory is recovered and reported again.
        }
    }

    private void signal(RunningJob job, int signal) {
        if (job.ownSession() && ProcessSignals.signalGroup(job.pid(), signal)) return;
        // No group of its own (no setsid here): signal the tree, children first.
        job.handle().descendants().forEach(d -> ProcessSignals.signalProcess(d.pid(), signal));
        ProcessSignals.signalProcess(job.pid(), signal);
    }

    private static String readQuietly(Path p) {
        try {
            return Files.readString(p).trim();
        } catch (IOException e) {
            return "(unknown)";
        }
    }

    private static long lastModified(Path p) {
        try {
            return Files.getLastModifiedTime(p).toMillis();
        } catch (IOException e) {
            return System.currentTimeMillis();
        }
    }

    /** Stops watching; running jobs keep running (an agent restart re-adopts them). */
    @Override
    public void close() {
        timer.shutdownNow();
        watchers.shutdown();
    }

    /** Stops every job and waits for them to end, for tests and an explicit drain. */
    public void stopAll(String reason, Duration wait) throws InterruptedException {
        List<RunningJob> jobs = List.copyOf(running.values());
        for (RunningJob j : jobs) stop(j.key(), JobPhase.STOPPED, reason);
        long deadline = System.nanoTime() + wait.toNanos();
        for (RunningJob j : jobs) {
            try {
                j.end().get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                // reported by the caller's own checks
            }
        }
    }
}
