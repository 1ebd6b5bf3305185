package io.gpupool.agent.node;

import io.gpupool.agent.confine.Confinement;
import io.gpupool.agent.gpu.FakeGpuBackend;
import io.gpupool.agent.gpu.GpuBackend;
import io.gpupool.agent.gpu.GpuBackendException;
import io.gpupool.agent.gpu.GpuDiscovery;
import io.gpupool.agent.gpu.LocalNode;
import io.gpupool.agent.link.LinkException;
import io.gpupool.agent.link.ServerLink;
import io.gpupool.agent.protocol.AccountIsolation;
import io.gpupool.agent.protocol.GpuSample;
import io.gpupool.agent.protocol.JobPhase;
import io.gpupool.agent.protocol.JobStatusReport;
import io.gpupool.agent.protocol.LogChunk;
import io.gpupool.agent.protocol.NodeConfinement;
import io.gpupool.agent.protocol.NodeInventory;
import io.gpupool.agent.protocol.NodeReport;
import io.gpupool.agent.protocol.RegisterRequest;
import io.gpupool.agent.protocol.Registration;
import io.gpupool.agent.protocol.ReportResponse;
import io.gpupool.agent.protocol.RunningJobInfo;
import io.gpupool.agent.run.AccountSwitch;
import io.gpupool.agent.run.FenceKeeper;
import io.gpupool.agent.run.JobRunner;
import io.gpupool.agent.run.JobStore;
import io.gpupool.agent.run.RunnerConfig;
import io.gpupool.agent.run.RunningJob;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The node agent: one per GPU server. It owns the GPU backend, the job runner and the agent's durable
 * state, and runs one loop (like slurmd's or Nomad's client's): it reads the GPUs, applies the memory
 * policy, sends a report, and reconciles the jobs with the desired state it gets back.
 *
 * <p>Pace: a report with nothing to say asks the server to hold its answer up to one report interval until
 * the node's desired state changes (a long poll), so new work starts at once; a job starting or ending
 * cuts that wait short ({@link ServerLink#wake()}) and is reported at once. Without news and without a
 * server that holds answers, the agent reports once per interval.
 *
 * <p>When the server cannot be reached nothing stops: jobs keep running, their status reports queue up
 * on disk, and the next report that gets through carries them (oldest first); retries back off up to the
 * report interval. When the agent itself restarts, it re-adopts the jobs still running and reports those
 * that ended meanwhile. Every report the server applies renews the node's {@link Lease}; when it runs out (the
 * server has been out of reach for its node-lost timeout) a watchdog stops the jobs and nothing starts until a
 * report gets through again. A {@link FenceKeeper} process does the same if this agent is dead or paused.
 */
public final class NodeAgent implements AutoCloseable {

    /**
     * @param nodeName             the node's name in the pool
     * @param reportInterval       longest time between reports (the server may set another at registration)
     * @param maxStatusesPerReport status reports per report at most (the rest follow in the next ones)
     * @param maxLogBytesPerReport log output per report at most
     * @param runner               how jobs run; its work directory is the agent's
     * @param agentVersion         sent at registration
     * @param fence                stop the jobs when the node's lease runs out (the server has been unreachable for
     *                             its node-lost timeout, after which it re-places them), also through a
     *                             {@link FenceKeeper} that outlives the agent
     * @param retention            how long the directories (logs) of ended attempts are kept
     * @param minReportGap         shortest time between two reports, so a burst of job starts and ends goes
     *                             out in a few reports rather than one each
     * @param confine              the jobs' cgroups (off by default here: in-process agents of the demo and the tests;
     *                             {@code gpupool agent} turns it on)
     */
    public record Config(String nodeName, Duration reportInterval, int maxStatusesPerReport, int maxLogBytesPerReport,
                         RunnerConfig runner, String agentVersion, boolean fence, Duration retention, Duration minReportGap,
                         Confinement.Settings confine) {
        public Config {
            if (confine == null) confine = Confinement.Settings.off();
        }

        public Config(String nodeName, Duration reportInterval, int maxStatusesPerReport, int maxLogBytesPerReport,
                      RunnerConfig runner, String agentVersion, boolean fence, Duration retention, Duration minReportGap) {
            this(nodeName, reportInterval, maxStatusesPerReport, maxLogBytesPerReport, runner, agentVersion, fence, retention, minReportGap, null);
        }

        public static Config defaults(String nodeName, Path workDir) {
            return new Config(nodeName, Duration.ofSeconds(5), 500, 256 * 1024, RunnerConfig.defaults(workDir), "dev", true,
                    Duration.ofDays(7), Duration.ofMillis(50));
        }

        public Config withConfine(Confinement.Settings c) {
            return new Config(nodeName, reportInterval, maxStatusesPerReport, maxLogBytesPerReport, runner, agentVersion, fence, retention, minReportGap, c);
        }

        public Config withReportInterval(Duration d) {
            return new Config(nodeName, d, maxStatusesPerReport, maxLogBytesPerReport, runner, agentVersion, fence, retention, minReportGap, confine);
        }

        public Config withRunner(RunnerConfig r) {
            return new Config(nodeName, reportInterval, maxStatusesPerReport, maxLogBytesPerReport, r, agentVersion, fence, retention, minReportGap, confine);
        }

        public Config withFence(boolean f) {
            return new Config(nodeName, reportInterval, maxStatusesPerReport, maxLogBytesPerReport, runner, agentVersion, f, retention, minReportGap, confine);
        }

        public Config withAgentVersion(String v) {
            return new Config(nodeName, reportInterval, maxStatusesPerReport, maxLogBytesPerReport, runner, v, fence, retention, minReportGap, confine);
        }
    }

    /**
     * What one loop pass did.
     *
     * @param busy the pass had news to send or got a new desired state (or was woken): report again soon
     */
    public record Tick(boolean connected, int statusesSent, Reconciler.Applied applied, String problem, boolean busy) {}

    private final Config config;
    private final GpuBackend backend;
    private final NodeInventory inventory;
    private final ServerLink link;
    private final AgentState state;
    private final StatusBuffer statuses;
    private final LogShipper logs;
    private final Reconciler reconciler;
    private final JobRunner runner;
    private final Confinement confinement;
    private final Lease lease = new Lease(System::nanoTime);
    /** Null when fencing is off or the machine cannot run a keeper. */
    private final FenceKeeper keeper;
    private final ExecutorService background = Executors.newVirtualThreadPerTaskExecutor();
    private final ExecutorService starts = Executors.newFixedThreadPool(Math.clamp(2L * Runtime.getRuntime().availableProcessors(), 2, 16),
            r -> Thread.ofPlatform().daemon().name("gpupool-agent-start").unstarted(r));
    private final Object pace = new Object();
    private Thread loop;
    private ScheduledExecutorService watchdog;
    private volatile boolean closing;
    private boolean wakeRequested; // guarded by pace
    private volatile boolean registered;
    private volatile boolean connected;
    private volatile Duration interval;
    private volatile long nodeLostTimeoutMs = Registration.DEFAULT_NODE_LOST_TIMEOUT_MS;
    /** When ({@link System#nanoTime}) the last report the server applied was sent; 0 before the first. */
    private volatile long lastAppliedSentNanos;
    /** The loop has tried to register once: before that, a missing lease is no reason to fence re-adopted jobs. */
    private volatile boolean triedServer;
    private volatile String leaseFileProblem;
    /** Completed, with the one line to show, when the server turned out to speak another agent protocol version. */
    private final CompletableFuture<String> incompatible = new CompletableFuture<>();
    private long lastPruneMs;

    /**
     * Opens the work directory, re-adopts the jobs still running from an earlier agent process there, and
     * records the end of those that ended meanwhile. Does not contact the server yet.
     */
    public NodeAgent(Config config, GpuBackend backend, GpuDiscovery discovery, ServerLink link) throws IOException {
        this.config = config;
        this.backend = backend;
        this.inventory = LocalNode.inventory(discovery);
        this.link = link;
        this.interval = config.reportInterval();
        Path workDir = config.runner().workDir();
        this.state = new AgentState(workDir);
        this.statuses = new StatusBuffer(workDir);
        this.logs = new LogShipper(new JobStore(workDir), state);
        this.reconciler = new Reconciler(statuses, logs, state, background, starts, lease::valid);
        this.confinement = Confinement.start(config.confine(), config.nodeName(), discovery.gpus().size());
        this.runner = new JobRunner(config.runner(), discovery.gpus(), reconciler, confinement);
        reconciler.attach(runner);
        if (backend instanceof FakeGpuBackend fake) fake.follow(runner);
        this.keeper = config.fence() && FenceKeeper.supported() ? new FenceKeeper(workDir, config.runner().killGrace()) : null;
        // an agent process before this one held a lease: its jobs (re-adopted below) may run until it runs out
        FenceKeeper.inheritedExpiry(workDir).ifPresent(t -> lease.inherit(t, 0));
        for (RunningJob j : runner.recover()) logs.track(j.key());
        statuses.onAdd(this::wake);
    }

    /** Runs the loop on its own thread, and the fencing watchdog, until {@link #close()}. */
    public synchronized void start() {
        if (loop != null) return;
        long period = Math.clamp(interval.toMillis() / 4, 20, 250);
        watchdog = Executors.newSingleThreadScheduledExecutor(r -> Thread.ofPlatform().daemon().name("gpupool-agent-fence").unstarted(r));
        watchdog.scheduleWithFixedDelay(() -> {
            try {
                fenceIfLeaseRanOut();
            } catch (RuntimeException e) {
                // checked again at the next period
            }
        }, period, period, TimeUnit.MILLISECONDS);
        loop = Thread.ofPlatform().name("gpupool-agent-" + config.nodeName()).start(this::runLoop);
    }

    private void runLoop() {
        long backoffMs = 0;
        while (!closing) {
            long started = System.currentTimeMillis();
            synchronized (pace) {
                wakeRequested = false;
            }
            Tick t;
            try {
                t = tick();
            } catch (RuntimeException e) {
                t = new Tick(false, 0, null, "loop: " + e, false); // one failed pass must not end the loop
            }
            long delayMs;
            if (!t.connected()) {
                backoffMs = backoffMs == 0 ? Math.min(250, interval.toMillis()) : Math.min(2 * backoffMs, interval.toMillis());
                delayMs = backoffMs;
            } else {
                backoffMs = 0;
                long gap = config.minReportGap().toMillis();
                delayMs = t.busy() ? gap : Math.max(gap, interval.toMillis() - (System.currentTimeMillis() - started));
            }
            pause(started, delayMs, t.connected());
        }
    }

    /** Sleeps {@code delayMs} from {@code from}; news ends it early (not before the minimum gap) while connected. */
    private void pause(long from, long delayMs, boolean wakeable) {
        long earliest = from + config.minReportGap().toMillis();
        long deadline = System.currentTimeMillis() + delayMs;
        synchronized (pace) {
            try {
                while (!closing) {
                    long now = System.currentTimeMillis();
                    long until = wakeable && wakeRequested ? Math.min(deadline, earliest) : deadline;
                    if (now >= until) break;
                    pace.wait(until - now);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                closing = true;
            }
        }
    }

    /** News (a status report was added): report soon, cutting a waiting report short. */
    private void wake() {
        synchronized (pace) {
            wakeRequested = true;
            pace.notifyAll();
        }
        link.wake();
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
            List<LogChunk> chunks = logs.collect(config.maxLogBytesPerReport());
            boolean news = !out.isEmpty() || !chunks.isEmpty();
            long epoch = lease.epoch();
            long sentNanos = System.nanoTime();
            NodeReport report = new NodeReport(state.nodeId(), System.currentTimeMillis(), state.appliedDesiredVersion(), samples,
                    runningInfo(), out, chunks, news ? 0 : interval.toMillis(), epoch, config.runner().killGrace().toMillis(), accounts());
            ReportResponse response = link.report(report);
            connected = true;
            if (response.nodeLostTimeoutMs() > 0) nodeLostTimeoutMs = response.nodeLostTimeoutMs();
            if (response.leaseEpoch() == epoch) renewLease(sentNanos, epoch);
            else lease.adoptEpoch(response.leaseEpoch()); // declared lost meanwhile: report again under the new epoch
            problem = join(problem, leaseFileProblem);
            statuses.acknowledge(response.ackedStatusSeq());
            logs.acknowledge(response.logAcks());
            Reconciler.Applied applied = response.desired() != null ? reconciler.apply(response.desired()) : reconciler.reapply();
            return new Tick(true, out.size(), applied, problem, news || response.desired() != null);
        } catch (LinkException e) {
            if (e.kind() == LinkException.Kind.WOKEN) return new Tick(true, 0, null, problem, true);
            connected = false;
            if (e.kind() == LinkException.Kind.INCOMPATIBLE) {
                // nothing this agent says or hears can be trusted with that server: the loop ends (jobs keep running
                // until the lease runs out, as when the agent stops), and the agent's owner learns why
                closing = true;
                incompatible.complete(e.getMessage());
            }
            if (e.kind() == LinkException.Kind.UNKNOWN_NODE) registered = false;
            fenceIfLeaseRanOut();
            return new Tick(false, 0, null, join(problem, "server: " + e.getMessage()), false);
        } catch (IOException e) {
            return new Tick(connected, 0, null, join(problem, "work directory: " + e.getMessage()), false);
        } finally {
            triedServer = true;
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

    private AccountIsolation accounts() {
        AccountSwitch s = runner.accounts();
        return new AccountIsolation(s.switchesAccounts(), s.whyNot(), s.missingAccounts());
    }

    private void register() throws LinkException, IOException {
        long sentNanos = System.nanoTime();
        Registration r = link.register(new RegisterRequest(config.nodeName(), config.agentVersion(), inventory, runningInfo(),
                statuses.firstPendingSeq(), config.runner().killGrace().toMillis(), confinement.description(), accounts()));
        state.registered(r.nodeId(), r.serverEpoch());
        if (r.reportIntervalMs() > 0) interval = Duration.ofMillis(r.reportIntervalMs());
        if (r.nodeLostTimeoutMs() > 0) nodeLostTimeoutMs = r.nodeLostTimeoutMs();
        lease.adoptEpoch(r.leaseEpoch());
        renewLease(sentNanos, r.leaseEpoch());
        registered = true;
    }

    /**
     * The server applied what was sent at {@code sentNanos}: the lease runs until the node-lost timeout after that.
     * The keeper's lease file follows, so it fences at the same instant if this process cannot.
     */
    private void renewLease(long sentNanos, long epoch) {
        lease.renew(sentNanos, nodeLostTimeoutMs, epoch);
        lastAppliedSentNanos = sentNanos;
        if (keeper == null) return;
        try {
            keeper.renew(lease.expiresAtNanos());
            leaseFileProblem = null;
        } catch (IOException | RuntimeException e) {
            // the keeper then fences at the deadline it last read: early, never late
            leaseFileProblem = "fence keeper: cannot renew the lease file: " + e.getMessage();
        }
    }

    /**
     * When the lease has run out, stops every job (SIGTERM, then SIGKILL after the kill grace). The server counts its
     * node-lost timeout from when it applied the last report, which is no earlier than when the agent sent it, and
     * re-places the node's jobs only after that timeout, this agent's kill grace and its safety margin: by then the
     * jobs are gone. The price: a server outage as long as the timeout stops the jobs too; at-most-once running wins
     * over availability ({@code --no-fence} turns it off).
     */
    private void fenceIfLeaseRanOut() {
        if (!config.fence() || lease.valid() || !triedServer) return;
        long sent = lastAppliedSentNanos;
        String since = sent == 0 ? "since this agent started" : "for " + (lease.now() - sent) / 1_000_000_000L + " s";
        for (RunningJob j : runner.running()) {
            if (j.stopping()) continue;
            runner.stop(j.key(), JobPhase.STOPPED, "fenced: the node's lease ran out (no report applied by the server " + since
                    + "; the server declares the node lost after " + nodeLostTimeoutMs / 1000 + " s and then runs its jobs elsewhere)");
        }
    }

    /** Whether the node's lease is valid now (tests). */
    boolean leaseValid() {
        return lease.valid();
    }

    /** The fence keeper's process, if one runs (tests). */
    public java.util.Optional<ProcessHandle> keeperProcess() {
        return keeper == null ? java.util.Optional.empty() : keeper.process();
    }

    private List<RunningJobInfo> runningInfo() {
        return runner.running().stream()
                .sorted(Comparator.comparing(RunningJob::key))
                .map(j -> new RunningJobInfo(j.key().jobId(), j.key().attempt(), j.pid(), j.startedAtMs(), j.stopping(), j.key().submittedMs()))
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

    /** What the node enforces on its jobs (sent at registration). */
    public NodeConfinement confinement() {
        return confinement.description();
    }

    public JobRunner runner() {
        return runner;
    }

    /** Status reports not yet acknowledged by the server. */
    public int bufferedStatuses() {
        return statuses.size();
    }

    /**
     * Completes, with a one-line message naming the server and both versions, when the loop stopped because the server
     * speaks another agent protocol version; never completes otherwise.
     */
    public CompletableFuture<String> incompatibleServer() {
        return incompatible.copy();
    }

    /**
     * Stops the loop and releases the GPU backend. Jobs keep running: an agent started again on the same
     * work directory takes them back (stop them first with {@link JobRunner#stopAll} to drain a node).
     */
    @Override
    public void close() {
        stopLoop();
        runner.close();
        background.shutdown();
        starts.shutdown();
        backend.close();
    }

    /**
     * Drains the node: the loop stops first (so nothing new starts and no report goes out), then every job is
     * stopped (SIGTERM, grace, SIGKILL) within {@code wait}, then the agent closes. The ends are kept in the
     * status journal and reported by the next agent on this work directory.
     */
    public void closeAndStopJobs(String reason, Duration wait) throws InterruptedException {
        stopLoop();
        try {
            runner.stopAll(reason, wait);
        } finally {
            close();
        }
    }

    private void stopLoop() {
        Thread l;
        synchronized (this) {
            l = loop;
            loop = null;
            closing = true;
            if (watchdog != null) watchdog.shutdownNow();
        }
        synchronized (pace) {
            pace.notifyAll();
        }
        link.wake(); // a waiting report ends now; a pass in progress finishes its writes
        if (l != null) {
            try {
                l.join(30_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
