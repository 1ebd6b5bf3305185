package io.gpupool.agent.node;

import io.gpupool.agent.gpu.FakeGpuBackend;
import io.gpupool.agent.gpu.GpuBackend;
import io.gpupool.agent.gpu.GpuBackendException;
import io.gpupool.agent.gpu.GpuDiscovery;
import io.gpupool.agent.gpu.GpuSample;
import io.gpupool.agent.gpu.NodeInventory;
import io.gpupool.agent.link.JobStatusReport;
import io.gpupool.agent.link.LinkException;
import io.gpupool.agent.link.NodeReport;
import io.gpupool.agent.link.RegisterRequest;
import io.gpupool.agent.link.Registration;
import io.gpupool.agent.link.ReportResponse;
import io.gpupool.agent.link.RunningJobInfo;
import io.gpupool.agent.link.ServerLink;
import io.gpupool.agent.run.JobPhase;
import io.gpupool.agent.run.JobRunner;
import io.gpupool.agent.run.JobStore;
import io.gpupool.agent.run.RunnerConfig;
import io.gpupool.agent.run.RunningJob;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The node agent: one per GPU server. It owns the GPU backend, the job runner and the agent's durable
 * state, and runs one loop (like slurmd's or Nomad's client's): every report interval it reads the GPUs,
 * applies the memory policy, sends a report, and reconciles the jobs with the desired state it gets back.
 *
 * <p>When the server cannot be reached nothing stops: jobs keep running, their status reports queue up
 * on disk, and the next report that gets through carries them (oldest first). When the agent itself
 * restarts, it re-adopts the jobs still running and reports those that ended meanwhile.
 */
public final class NodeAgent implements AutoCloseable {

    /**
     * @param nodeName             the node's name in the pool
     * @param reportInterval       time between reports (the server may set another at registration)
     * @param maxStatusesPerReport status reports per report at most (the rest follow in the next ones)
     * @param maxLogBytesPerReport log output per report at most
     * @param runner               how jobs run; its work directory is the agent's
     * @param agentVersion         sent at registration
     * @param fence                stop the jobs when the server has been unreachable for so long that it
     *                             will have declared the node lost and re-placed them (see {@link #fenceAfter})
     * @param retention            how long the directories (logs) of ended attempts are kept
     */
    public record Config(String nodeName, Duration reportInterval, int maxStatusesPerReport, int maxLogBytesPerReport,
                         RunnerConfig runner, String agentVersion, boolean fence, Duration retention) {
        public static Config defaults(String nodeName, Path workDir) {
            return new Config(nodeName, Duration.ofSeconds(5), 500, 256 * 1024, RunnerConfig.defaults(workDir), "dev", true,
                    Duration.ofDays(7));
        }

        public Config withReportInterval(Duration d) {
            return new Config(nodeName, d, maxStatusesPerReport, maxLogBytesPerReport, runner, agentVersion, fence, retention);
        }

        public Config withRunner(RunnerConfig r) {
            return new Config(nodeName, reportInterval, maxStatusesPerReport, maxLogBytesPerReport, r, agentVersion, fence, retention);
        }

        public Config withFence(boolean f) {
            return new Config(nodeName, reportInterval, maxStatusesPerReport, maxLogBytesPerReport, runner, agentVersion, f, retention);
        }
    }

    /** What one loop pass did. */
    public record Tick(boolean connected, int statusesSent, Reconciler.Applied applied, String problem) {}

    private final Config config;
    private final GpuBackend backend;
    private final NodeInventory inventory;
    private final ServerLink link;
    private final AgentState state;
    private final StatusBuffer statuses;
    private final LogShipper logs;
    private final Reconciler reconciler;
    private final JobRunner runner;
    private final ExecutorService background = Executors.newVirtualThreadPerTaskExecutor();
    private ScheduledExecutorService loop;
    private volatile boolean registered;
    private volatile boolean connected;
    private volatile Duration interval;
    private volatile long nodeLostTimeoutMs = Registration.DEFAULT_NODE_LOST_TIMEOUT_MS;
    /** The last answer from the server; the agent's start before the first (re-adopted jobs count from there). */
    private volatile long lastContactMs = System.currentTimeMillis();
    private long lastPruneMs;

    /**
     * Opens the work directory, re-adopts the jobs still running from an earlier agent process there, and
     * records the end of those that ended meanwhile. Does not contact the server yet.
     */
    public NodeAgent(Config config, GpuBackend backend, GpuDiscovery discovery, ServerLink link) throws IOException {
        this.config = config;
        this.backend = backend;
        this.inventory = NodeInventory.of(discovery);
        this.link = link;
        this.interval = config.reportInterval();
        Path workDir = config.runner().workDir();
        this.state = new AgentState(workDir);
        this.statuses = new StatusBuffer(workDir);
        this.logs = new LogShipper(new JobStore(workDir), state);
        this.reconciler = new Reconciler(statuses, logs, state, background);
        this.runner = new JobRunner(config.runner(), discovery.gpus(), reconciler);
        reconciler.attach(runner);
        if (backend instanceof FakeGpuBackend fake) fake.follow(runner);
        for (RunningJob j : runner.recover()) logs.track(j.key());
    }

    /** Runs the loop on its own thread until {@link #close()}. */
    public synchronized void start() {
        if (loop != null) return;
        ScheduledThreadPoolExecutor l = new ScheduledThreadPoolExecutor(1,
                r -> Thread.ofPlatform().name("gpupool-agent-" + config.nodeName()).unstarted(r));
        l.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        loop = l;
        loop.schedule(this::loopOnce, 0, TimeUnit.MILLISECONDS);
    }

    private void loopOnce() {
        try {
            tick();
        } catch (RuntimeException e) {
            // one failed pass must not end the loop
        }
        ScheduledExecutorService l = loop;
        try {
            if (l != null) l.schedule(this::loopOnce, interval.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // closed meanwhile
        }
    }

    /** One pass of the loop; public so tests can drive the agent step by step. */
    public Tick tick() {
        pruneHourly();
        List<GpuSample> samples;
        String problem = null;
        try {
            samples = backend.sample();
            runner.enforceMemory(samples);
        } catch (GpuBackendException e) {
            samples = List.of();
            problem = "GPU telemetry: " + e.getMessage();
        }
        try {
            if (!registered) register();
            List<JobStatusReport> out = statuses.pending(config.maxStatusesPerReport());
            NodeReport report = new NodeReport(state.nodeId(), System.currentTimeMillis(), state.appliedDesiredVersion(),
                    samples, runningInfo(), out, logs.collect(config.maxLogBytesPerReport()));
            ReportResponse response = link.report(report);
            connected = true;
            lastContactMs = System.currentTimeMillis();
            statuses.acknowledge(response.ackedStatusSeq());
            logs.acknowledge(response.logAcks());
            Reconciler.Applied applied = response.desired() != null ? reconciler.apply(response.desired()) : reconciler.reapply();
            return new Tick(true, out.size(), applied, problem);
        } catch (LinkException e) {
            connected = false;
            if (e.kind() == LinkException.Kind.UNKNOWN_NODE) registered = false;
            fenceIfCutOff();
            return new Tick(false, 0, null, join(problem, "server: " + e.getMessage()));
        } catch (IOException e) {
            return new Tick(connected, 0, null, join(problem, "work directory: " + e.getMessage()));
        }
    }

    private void pruneHourly() {
        long now = System.currentTimeMillis();
        if (now - lastPruneMs < Duration.ofHours(1).toMillis()) return;
        lastPruneMs = now;
        try {
            runner.store().pruneEnded(config.retention(), logs::tracking);
        } catch (IOException | RuntimeException e) {
            // retried in an hour; nothing depends on it meanwhile
        }
    }

    private void register() throws LinkException, IOException {
        Registration r = link.register(new RegisterRequest(config.nodeName(), config.agentVersion(), inventory, runningInfo()));
        state.registered(r.nodeId(), r.serverEpoch());
        if (r.reportIntervalMs() > 0) interval = Duration.ofMillis(r.reportIntervalMs());
        if (r.nodeLostTimeoutMs() > 0) nodeLostTimeoutMs = r.nodeLostTimeoutMs();
        lastContactMs = System.currentTimeMillis();
        registered = true;
    }

    /**
     * How long the server may be out of reach before the agent stops its jobs: the server's node-lost
     * timeout less the kill grace period and one report interval, so the jobs are gone before the server
     * gives their GPUs (and, with restart policy requeue, the jobs themselves) to another node. The price:
     * a server outage longer than this stops the jobs too; at-most-once running wins over availability.
     */
    Duration fenceAfter() {
        long ms = nodeLostTimeoutMs - config.runner().killGrace().toMillis() - interval.toMillis();
        return Duration.ofMillis(Math.max(ms, interval.toMillis()));
    }

    private void fenceIfCutOff() {
        if (!config.fence()) return;
        long silentMs = System.currentTimeMillis() - lastContactMs;
        if (silentMs < fenceAfter().toMillis()) return;
        for (RunningJob j : runner.running()) {
            if (j.stopping()) continue;
            runner.stop(j.key(), JobPhase.STOPPED, "fenced: the server has been unreachable for " + silentMs / 1000
                    + " s and will have declared this node lost (after " + nodeLostTimeoutMs / 1000 + " s)");
        }
    }

    private List<RunningJobInfo> runningInfo() {
        return runner.running().stream()
                .sorted(Comparator.comparing(RunningJob::key))
                .map(j -> new RunningJobInfo(j.key().jobId(), j.key().attempt(), j.pid(), j.startedAtMs(), j.stopping()))
                .toList();
    }

    private static String join(String a, String b) {
        return a == null ? b : a + "; " + b;
    }

    public boolean connected() {
        return connected;
    }

    public NodeInventory inventory() {
        return inventory;
    }

    public JobRunner runner() {
        return runner;
    }

    /** Status reports not yet acknowledged by the server. */
    public int bufferedStatuses() {
        return statuses.size();
    }

    /**
     * Stops the loop and releases the GPU backend. Jobs keep running: an agent started again on the same
     * work directory takes them back (stop them first with {@link JobRunner#stopAll} to drain a node).
     */
    @Override
    public void close() {
        ScheduledExecutorService l;
        synchronized (this) {
            l = loop;
            loop = null;
        }
        if (l != null) {
            l.shutdown(); // no interrupt: a pass in progress finishes its writes
            try {
                l.awaitTermination(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        runner.close();
        background.shutdown();
        backend.close();
    }
}
