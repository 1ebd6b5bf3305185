package io.gpupool.server.core;

import io.gpupool.engine.JobState;
import io.gpupool.engine.RoundResult;
import io.gpupool.engine.Scheduler;
import io.gpupool.engine.SubmitResult;
import io.gpupool.engine.TenantConfig;
import io.gpupool.engine.state.Allocation;
import io.gpupool.engine.state.GpuGrant;
import io.gpupool.engine.state.NodeState;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.JobSpec;
import io.gpupool.model.NodeSpec;
import io.gpupool.model.SpecException;
import io.gpupool.store.EventRow;
import io.gpupool.store.GrantRow;
import io.gpupool.store.GroupCommitWriter;
import io.gpupool.store.JobRow;
import io.gpupool.store.LogRow;
import io.gpupool.store.NodeRow;
import io.gpupool.store.RecoveredState;
import io.gpupool.store.TenantRow;
import io.gpupool.store.Write;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The service around the engine. One thread, the engine loop, owns the {@link Scheduler} and everything
 * it decides: callers hand in commands (submit, cancel, finish, cordon, ...) and get futures. Each loop
 * iteration runs every queued command, then one scheduling round, then hands all resulting writes to the
 * store's group-commit writer in one piece; the futures complete (and the changes go out on SSE) only
 * after that commit. So an answer the API gives is always durable, and the store always holds a prefix of
 * the engine's decisions in order.
 */
public final class PoolService implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PoolService.class);
    private static final int MAX_COMMANDS_PER_ITERATION = 5000;
    private static final long PERIODIC_ROUND_MS = 1000;
    private static final long SNAPSHOT_INTERVAL_MS = 250;
    private static final int QUEUE_IN_SNAPSHOT = 200;
    /** Rounds after a change are at least this far apart, and at least twice the last round's duration: under a
     * flood of submissions the loop spends at most about a third of its time deciding, the rest taking work in. */
    private static final long MIN_ROUND_GAP_NANOS = 10_000_000;

    private final GroupCommitWriter writer;
    private final GpuCatalog catalog;
    private final GpuTelemetry telemetry;
    private final ServiceClock clock;
    private final LoopListener listener;
    private final Consumer<List<Change>> publisher;
    private final PoolHistory history = new PoolHistory();

    // ---- owned by the loop thread ----
    private final Scheduler engine;
    private SchedulerSettings settings;
    private final Map<String, ActiveJob> active = new HashMap<>();
    private final Map<String, String> idempotency;
    private final Map<String, TenantRow> tenants = new TreeMap<>();
    private final Map<String, NodeRow> nodes = new LinkedHashMap<>();
    private long nextSeq;
    private long nextEventId;
    private boolean dirty = true;
    private long nextPeriodicRoundMs;
    private long lastSnapshotMs;
    private long nextRoundNanos;
    private final List<Write> writes = new ArrayList<>();
    private final List<Change> changes = new ArrayList<>();
    private CompletableFuture<Void> iterationCommit;

    private final LinkedBlockingQueue<Runnable> inbox = new LinkedBlockingQueue<>();
    private final Thread loop;
    private volatile boolean running = true;
    private volatile PoolSnapshot snapshot = PoolSnapshot.empty();

    /**
     * Rebuilds the pool from what the store recovered, adds the static nodes not yet known, and starts the
     * engine loop.
     *
     * @param staticNodes nodes declared on the command line (or by the demo), with their source label
     */
    public PoolService(RecoveredState recovered, Map<NodeSpec, String> staticNodes, SchedulerSettings defaults,
                       GroupCommitWriter writer, GpuCatalog catalog, GpuTelemetry telemetry, ServiceClock clock,
                       LoopListener listener, Consumer<List<Change>> publisher) {
        this.writer = writer;
        this.catalog = catalog;
        this.telemetry = telemetry;
        this.clock = clock;
        this.listener = listener;
        this.publisher = publisher;
        long now = clock.now();
        for (TenantRow t : recovered.tenants()) tenants.put(t.name(), t);
        for (NodeRow n : recovered.nodes()) nodes.put(n.name(), n);
        for (var e : staticNodes.entrySet()) {
            if (!nodes.containsKey(e.getKey().name())) {
                NodeRow row = new NodeRow(e.getKey().name(), NodeCodec.toJson(e.getKey()), e.getValue(), false, now);
                nodes.put(row.name(), row);
                writes.add(new Write.PutNode(row));
            }
        }
        String stored = recovered.settings().get("scheduler");
        this.settings = stored != null ? SchedulerSettings.fromJson(stored, defaults) : defaults;
        List<NodeSpec> specs = nodes.values().stream().map(n -> NodeCodec.fromJson(n.spec(), catalog)).toList();
        this.engine = new Scheduler(new ClusterSpec(specs), settings.toConfig(tenantConfigs()));
        for (NodeRow n : nodes.values()) if (n.cordoned()) engine.setCordoned(n.name(), true);
        this.idempotency = new HashMap<>(recovered.idempotency());
        this.nextSeq = recovered.nextSeq();
        this.nextEventId = recovered.nextEventId();
        restoreJobs(recovered, now);
        flush();
        this.loop = Thread.ofPlatform().name("gpupool-engine-loop").start(this::runLoop);
    }

    // ---- commands (any thread) ------------------------------------------------------------------

    /** Queues a job for its tenant; completes once it is durable. Idempotent per (tenant, key). */
    public CompletableFuture<Views.Submitted> submit(JobRequest request, String idempotencyKey) {
        return call(() -> {
            String tenant = request.tenant();
            if (idempotencyKey != null) {
                String existing = idempotency.get(tenant + "\n" + idempotencyKey);
                if (existing != null) {
                    ActiveJob a = active.get(existing);
                    CompletableFuture<Void> durable = a != null ? a.inserted : CompletableFuture.completedFuture(null);
                    return durable.thenApply(v -> new Views.Submitted(existing, null, false));
                }
            }
            if (!tenants.containsKey(tenant)) {
                throw ServiceException.invalid("tenant", "unknown tenant '" + tenant + "'; an admin creates it with POST /api/v1/tenants");
            }
            long now = clock.now();
            long seq = nextSeq++;
            String id = "j" + seq;
            JobSpec spec = request.toJobSpec(id, now);
            SubmitResult r = engine.submit(spec, now);
            if (!r.accepted()) {
                engine.forget(id);
                listener.rejected(tenant);
                throw ServiceException.invalid("numGpus", "the job can never run on this pool: " + r.reason());
            }
            JobRow row = new JobRow(seq, id, tenant, idempotencyKey, request.toJson(), "PENDING", now, null, null, 0, null, null);
            ActiveJob a = new ActiveJob(row, request, commitOfThisIteration());
            active.put(id, a);
            if (idempotencyKey != null) idempotency.put(tenant + "\n" + idempotencyKey, id);
            writes.add(new Write.InsertJob(row));
            event(a, "SUBMITTED", null, now);
            listener.submitted(tenant);
            dirty = true;
            return a.inserted.thenApply(v -> new Views.Submitted(id, row, true));
        });
    }

    /**
     * Cancels a pending or running job the caller may see. Completes with the final row, or with null when
     * the job is not active (the caller then tells "not found" from "already ended" by reading the store).
     */
    public CompletableFuture<JobRow> cancel(String jobId, io.gpupool.server.auth.Principal by) {
        return call(() -> {
            ActiveJob a = active.get(jobId);
            if (a == null || !by.sees(a.tenant())) return CompletableFuture.completedFuture(null);
            long now = clock.now();
            engine.cancel(jobId, now);
            return end(a, "CANCELLED", null, "cancelled by " + by.role().wire() + " token " + by.tokenId(), now);
        });
    }

    /** An agent (or the demo) reports that a running job ended. */
    public CompletableFuture<JobRow> finish(String jobId, boolean succeeded, Integer exitCode, String message) {
        return call(() -> {
            ActiveJob a = active.get(jobId);
            if (a == null) throw ServiceException.conflict("state", "job " + jobId + " is not running");
            if (!a.row.state().equals("RUNNING")) throw ServiceException.conflict("state", "job " + jobId + " is " + a.row.state() + ", not RUNNING");
            long now = clock.now();
            engine.complete(jobId, now);
            return end(a, succeeded ? "SUCCEEDED" : "FAILED", exitCode, message, now);
        });
    }

    /** Appends output lines of a running or ended job (from its agent). */
    public CompletableFuture<Void> appendLogs(String jobId, List<String> lines) {
        return call(() -> {
            long now = clock.now();
            for (String l : lines) writes.add(new Write.AppendLog(new LogRow(nextEventId++, jobId, now, l)));
            return commitOfThisIteration();
        });
    }

    /** Cordon (no new work) or uncordon a node. */
    public CompletableFuture<Void> setCordoned(String node, boolean cordoned) {
        return call(() -> {
            NodeRow n = requireNode(node);
            engine.setCordoned(node, cordoned);
            NodeRow row = new NodeRow(n.name(), n.spec(), n.source(), cordoned, n.registeredMs());
            nodes.put(node, row);
            writes.add(new Write.PutNode(row));
            dirty = true;
            return commitOfThisIteration();
        });
    }

    /** Cordons the node and sends its running jobs back to the queue (they restart elsewhere). */
    public CompletableFuture<List<String>> drain(String node) {
        return call(() -> {
            NodeRow n = requireNode(node);
            engine.setCordoned(node, true);
            NodeRow row = new NodeRow(n.name(), n.spec(), n.source(), true, n.registeredMs());
            nodes.put(node, row);
            writes.add(new Write.PutNode(row));
            int nodeId = engine.cluster().nodeId(node);
            long now = clock.now();
            List<String> moved = new ArrayList<>();
            for (JobState j : List.copyOf(engine.runningJobs())) {
                if (j.allocation().grants().stream().anyMatch(g -> g.node() == nodeId)) {
                    engine.preempt(j.id(), now);
                    requeued(active.get(j.id()), "PREEMPTED", "node " + node + " drained", now);
                    moved.add(j.id());
                }
            }
            dirty = true;
            return commitOfThisIteration().thenApply(v -> moved);
        });
    }

    /** Adds a node (an agent registering). Registering the same node again is a no-op. */
    public CompletableFuture<NodeRow> registerNode(NodeSpec spec, String source) {
        return call(() -> {
            NodeRow known = nodes.get(spec.name());
            String json = NodeCodec.toJson(spec);
            if (known != null) {
                if (!known.spec().equals(json)) {
                    throw ServiceException.conflict("name", "node " + spec.name() + " is registered with other GPUs; remove it first");
                }
                return CompletableFuture.completedFuture(known);
            }
            try {
                engine.addNode(spec);
            } catch (SpecException e) {
                throw ServiceException.invalid(e.field(), e.getMessage());
            }
            NodeRow row = new NodeRow(spec.name(), json, source, false, clock.now());
            nodes.put(row.name(), row);
            writes.add(new Write.PutNode(row));
            dirty = true;
            return commitOfThisIteration().thenApply(v -> row);
        });
    }

    /** Creates ({@code create}) or updates a tenant's weight, guarantee and limit. */
    public CompletableFuture<TenantRow> putTenant(String name, double weight, double guaranteed, double limit, boolean create) {
        return call(() -> {
            TenantRow old = tenants.get(name);
            if (create && old != null) throw ServiceException.conflict("name", "tenant '" + name + "' already exists");
            if (!create && old == null) throw ServiceException.notFound("tenant '" + name + "'");
            try {
                new TenantConfig(name, weight, guaranteed, limit);
            } catch (SpecException e) {
                throw ServiceException.invalid(e.field(), e.getMessage());
            }
            TenantRow row = new TenantRow(name, weight, guaranteed, limit, old != null ? old.createdMs() : clock.now());
            tenants.put(name, row);
            engine.reconfigure(settings.toConfig(tenantConfigs()));
            writes.add(new Write.PutTenant(row));
            dirty = true;
            return commitOfThisIteration().thenApply(v -> row);
        });
    }

    /** Applies new scheduler settings (validated by the caller) without a restart; running jobs keep their GPUs. */
    public CompletableFuture<SchedulerSettings> reconfigure(SchedulerSettings s) {
        return call(() -> {
            try {
                engine.reconfigure(s.toConfig(tenantConfigs()));
            } catch (SpecException e) {
                throw ServiceException.invalid(e.field(), e.getMessage());
            }
            settings = s;
            writes.add(new Write.PutSetting("scheduler", s.toJson()));
            dirty = true;
            return commitOfThisIteration().thenApply(v -> s);
        });
    }

    // ---- queries (any thread) -------------------------------------------------------------------

    public PoolSnapshot snapshot() { return snapshot; }

    public PoolHistory history() { return history; }

    public CompletableFuture<SchedulerSettings> settings() {
        return call(() -> CompletableFuture.completedFuture(settings));
    }

    public CompletableFuture<List<TenantRow>> tenants() {
        return call(() -> CompletableFuture.completedFuture(List.copyOf(tenants.values())));
    }

    public CompletableFuture<Boolean> tenantExists(String name) {
        return call(() -> CompletableFuture.completedFuture(tenants.containsKey(name)));
    }

    /** What the engine knows of an active job (state, reason for waiting, grants); null when not active. */
    public CompletableFuture<Views.Live> live(String jobId) {
        return call(() -> {
            ActiveJob a = active.get(jobId);
            if (a == null) return CompletableFuture.completedFuture(null);
            JobState j = engine.job(jobId);
            return CompletableFuture.completedFuture(new Views.Live(a.row.state(), j.waitReason(), grants(j.allocation())));
        });
    }

    /** The jobs a node must be running now (an agent's desired state). */
    public CompletableFuture<List<Views.Assignment>> assignments(String node) {
        return call(() -> {
            requireNode(node);
            int nodeId = engine.cluster().nodeId(node);
            List<Views.Assignment> out = new ArrayList<>();
            for (JobState j : engine.runningJobs()) {
                List<Views.Grant> mine = grants(j.allocation()).stream().filter(g -> g.node().equals(node)).toList();
                if (mine.isEmpty() || j.allocation().grants().stream().noneMatch(g -> g.node() == nodeId)) continue;
                ActiveJob a = active.get(j.id());
                out.add(new Views.Assignment(j.id(), a.tenant(), a.request.name(), a.request.command(), a.request.env(),
                        a.row.startedMs(), mine));
            }
            return CompletableFuture.completedFuture(out);
        });
    }

    /** How many GPUs the node has, or null when no such node is registered. */
    public CompletableFuture<Integer> gpuCount(String node) {
        return call(() -> {
            Integer id = engine.cluster().nodeId(node);
            return CompletableFuture.completedFuture(id == null ? null : engine.cluster().node(id).gpuCount());
        });
    }

    /** Nodes whose source is {@code source} (the demo's fake agents drive the "demo" ones). */
    public CompletableFuture<List<NodeSpec>> nodesFrom(String source) {
        return call(() -> CompletableFuture.completedFuture(nodes.values().stream().filter(n -> n.source().equals(source))
                .map(n -> NodeCodec.fromJson(n.spec(), catalog)).toList()));
    }

    /** Checks the engine's bookkeeping against the sharing rules (tests and the crash check call it). */
    public CompletableFuture<Void> checkConsistency() {
        return call(() -> {
            engine.checkConsistency();
            return CompletableFuture.completedFuture(null);
        });
    }

    public boolean alive() {
        return loop.isAlive() && running;
    }

    /** Installs the run-time predictor that qssf and EASY backfill consult (from the next round on). */
    public CompletableFuture<Void> usePredictor(io.gpupool.engine.policy.RuntimePredictor predictor) {
        return call(() -> {
            engine.setPredictor(predictor);
            dirty = true;
            return CompletableFuture.completedFuture(null);
        });
    }

    /** Runs {@code task} on the loop thread, which owns the engine and its predictor (e.g. to save the predictor). */
    public <T> CompletableFuture<T> onLoop(Supplier<T> task) {
        return call(() -> CompletableFuture.completedFuture(task.get()));
    }

    // ---- the loop -------------------------------------------------------------------------------

    /** Runs {@code task} on the loop thread; its future's outcome (or its exception) becomes the result. */
    private <T> CompletableFuture<T> call(Supplier<CompletableFuture<T>> task) {
        CompletableFuture<T> result = new CompletableFuture<>();
        if (!running) {
            result.completeExceptionally(new ServiceException(ServiceException.Kind.UNAVAILABLE, null, "the service is shutting down"));
            return result;
        }
        inbox.add(() -> {
            try {
                task.get().whenComplete((v, e) -> {
                    if (e != null) result.completeExceptionally(e instanceof java.util.concurrent.CompletionException c && c.getCause() != null ? c.getCause() : e);
                    else result.complete(v);
                });
            } catch (RuntimeException e) {
                result.completeExceptionally(e);
            }
        });
        return result;
    }

    private void runLoop() {
        while (running || !inbox.isEmpty()) {
            try {
                long now = clock.now();
                long waitMs = Math.max(1, Math.min(nextPeriodicRoundMs, lastSnapshotMs + SNAPSHOT_INTERVAL_MS) - now);
                if (dirty) waitMs = Math.max(1, Math.min(waitMs, (nextRoundNanos - System.nanoTime()) / 1_000_000));
                Runnable first = inbox.poll(waitMs, TimeUnit.MILLISECONDS);
                if (first != null) {
                    first.run();
                    Runnable next;
                    for (int n = 1; n < MAX_COMMANDS_PER_ITERATION && (next = inbox.poll()) != null; n++) next.run();
                }
                now = clock.now();
                if ((dirty && System.nanoTime() >= nextRoundNanos) || now >= nextPeriodicRoundMs) round(now);
                if (now - lastSnapshotMs >= SNAPSHOT_INTERVAL_MS) {
                    snapshot = buildSnapshot(now);
                    history.sample(snapshot);
                    lastSnapshotMs = now;
                }
                flush();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            } catch (RuntimeException e) {
                // A bug in one command or round must not stop the service; what was decided is still written.
                LOG.error("engine loop iteration failed", e);
                flush();
            }
        }
        flush();
    }

    private void round(long now) {
        long t0 = System.nanoTime();
        RoundResult r = engine.schedule(now);
        long nanos = System.nanoTime() - t0;
        nextRoundNanos = System.nanoTime() + Math.max(MIN_ROUND_GAP_NANOS, 2 * nanos);
        for (String id : r.preempted()) {
            JobState j = engine.job(id);
            requeued(active.get(id), "PREEMPTED", j.waitReason(), now);
        }
        for (String id : r.started()) {
            ActiveJob a = active.get(id);
            JobState j = engine.job(id);
            a.row = a.row.withState("RUNNING", now, null, j.preemptions(), null, null);
            writes.add(new Write.UpdateJob(a.row));
            writes.add(new Write.SetAllocation(id, grantRows(j.allocation())));
            event(a, "STARTED", describe(j.allocation()), now);
        }
        dirty = false;
        long reevaluate = engine.nextReevaluationMs(now).orElse(Long.MAX_VALUE);
        nextPeriodicRoundMs = Math.min(now + PERIODIC_ROUND_MS, Math.max(now + 1, reevaluate));
        listener.round(nanos, r.started().size(), r.preempted().size());
    }

    /** Hands this iteration's writes to the store; their futures complete and changes go out after the commit. */
    private void flush() {
        CompletableFuture<Void> done = iterationCommit;
        iterationCommit = null;
        if (writes.isEmpty()) {
            if (done != null) done.complete(null);
            return;
        }
        List<Change> published = List.copyOf(changes);
        List<Write> batch = List.copyOf(writes);
        writes.clear();
        changes.clear();
        writer.submit(batch).whenComplete((v, e) -> {
            if (e != null) {
                if (done != null) done.completeExceptionally(new ServiceException(ServiceException.Kind.UNAVAILABLE, null, "the store did not commit: " + e.getMessage()));
                return;
            }
            if (done != null) done.complete(null);
            publisher.accept(published);
        });
    }

    private CompletableFuture<Void> commitOfThisIteration() {
        if (iterationCommit == null) iterationCommit = new CompletableFuture<>();
        return iterationCommit;
    }

    // ---- job state changes (loop thread) --------------------------------------------------------

    private CompletableFuture<JobRow> end(ActiveJob a, String state, Integer exitCode, String message, long now) {
        boolean held = a.row.state().equals("RUNNING");
        a.row = a.row.withState(state, a.row.startedMs(), now, a.row.preemptions(), exitCode, message);
        writes.add(new Write.UpdateJob(a.row));
        if (held) writes.add(new Write.SetAllocation(a.id(), List.of()));
        event(a, state, message, now);
        active.remove(a.id());
        engine.forget(a.id());
        listener.finished(a.tenant(), state);
        dirty = true;
        JobRow row = a.row;
        return commitOfThisIteration().thenApply(v -> row);
    }

    /** A running job went back to the queue (preempted by the policy, drained, or not restorable). */
    private void requeued(ActiveJob a, String type, String why, long now) {
        a.row = a.row.withState("PENDING", a.row.startedMs(), null, a.row.preemptions() + 1, null, why);
        writes.add(new Write.UpdateJob(a.row));
        writes.add(new Write.SetAllocation(a.id(), List.of()));
        event(a, type, why, now);
    }

    private void event(ActiveJob a, String type, String detail, long now) {
        writes.add(new Write.InsertEvent(new EventRow(nextEventId++, a.id(), now, type, detail)));
        changes.add(new Change(type, a.id(), a.tenant(), a.row.state(), now, detail));
    }

    // ---- restart --------------------------------------------------------------------------------

    /**
     * Queues the stored active jobs again in arrival order and puts running ones back on the GPUs the store
     * recorded. The engine checks every grant against the GPU's capacity; a job whose grants no longer fit
     * (or whose node is gone) goes back to the queue instead, so no GPU is ever over capacity.
     */
    private void restoreJobs(RecoveredState r, long now) {
        for (JobRow row : r.activeJobs()) {
            JobRequest req = JobRequest.fromJson(row.spec(), catalog);
            JobSpec spec = req.toJobSpec(row.id(), row.submittedMs());
            ActiveJob a = new ActiveJob(row, req, CompletableFuture.completedFuture(null));
            String notRestored = null;
            if (row.state().equals("RUNNING")) {
                try {
                    Allocation recorded = allocation(row.id(), r.allocations().getOrDefault(row.id(), List.of()));
                    SubmitResult back = engine.restoreRunning(spec, recorded, row.startedMs(), now);
                    if (back.accepted()) {
                        active.put(row.id(), a);
                        continue;
                    }
                    notRestored = back.reason();
                } catch (IllegalStateException e) {
                    notRestored = e.getMessage();
                }
            }
            SubmitResult s = engine.submit(spec, now);
            active.put(row.id(), a);
            if (!s.accepted()) {
                engine.forget(row.id());
                a.row = a.row.withState("FAILED", row.startedMs(), now, row.preemptions(), null, "after restart: " + s.reason());
                writes.add(new Write.UpdateJob(a.row));
                writes.add(new Write.SetAllocation(row.id(), List.of()));
                event(a, "FAILED", a.row.message(), now);
                active.remove(row.id());
                continue;
            }
            if (notRestored != null) {
                LOG.warn("job {} cannot resume on its recorded GPUs ({}); it goes back to the queue", row.id(), notRestored);
                requeued(a, "REQUEUED", "its GPUs could not be restored after a restart: " + notRestored, now);
            }
        }
        if (!r.activeJobs().isEmpty()) {
            LOG.info("restored {} active jobs ({} running)", r.activeJobs().size(), engine.runningJobs().size());
        }
        engine.checkConsistency();
    }

    private Allocation allocation(String jobId, List<GrantRow> rows) {
        Map<Integer, List<GpuGrant>> byReplica = new TreeMap<>();
        for (GrantRow g : rows) {
            Integer node = engine.cluster().nodeId(g.node());
            if (node == null) throw new IllegalStateException("node " + g.node() + " is no longer in the pool");
            byReplica.computeIfAbsent(g.replica(), k -> new ArrayList<>()).add(new GpuGrant(node, g.gpu(), g.milli(), g.memoryMib(), g.exclusive()));
        }
        return new Allocation(jobId, List.copyOf(byReplica.values()));
    }

    // ---- views (loop thread) --------------------------------------------------------------------

    private List<GrantRow> grantRows(Allocation a) {
        List<GrantRow> out = new ArrayList<>();
        for (int r = 0; r < a.replicas().size(); r++) {
            for (GpuGrant g : a.replicas().get(r)) {
                out.add(new GrantRow(r, engine.cluster().node(g.node()).name(), g.gpu(), g.milli(), g.memoryMib(), g.exclusive()));
            }
        }
        return out;
    }

    private List<Views.Grant> grants(Allocation a) {
        if (a == null) return List.of();
        List<Views.Grant> out = new ArrayList<>();
        for (int r = 0; r < a.replicas().size(); r++) {
            for (GpuGrant g : a.replicas().get(r)) {
                NodeState n = engine.cluster().node(g.node());
                out.add(new Views.Grant(r, n.name(), g.gpu(), n.spec().gpus().get(g.gpu()).uuid(), g.milli(), g.memoryMib(), g.exclusive()));
            }
        }
        return out;
    }

    private String describe(Allocation a) {
        Map<String, List<String>> byNode = new LinkedHashMap<>();
        for (GpuGrant g : a.grants()) {
            byNode.computeIfAbsent(engine.cluster().node(g.node()).name(), k -> new ArrayList<>())
                    .add(g.gpu() + (g.exclusive() ? "" : "(" + g.milli() / 10 + "%," + g.memoryMib() + "MiB)"));
        }
        List<String> parts = new ArrayList<>();
        byNode.forEach((n, gs) -> parts.add(n + " GPU " + String.join(",", gs)));
        return String.join("; ", parts);
    }

    private NodeRow requireNode(String node) {
        NodeRow n = nodes.get(node);
        if (n == null) throw ServiceException.notFound("node '" + node + "'");
        return n;
    }

    private Map<String, TenantConfig> tenantConfigs() {
        Map<String, TenantConfig> m = new LinkedHashMap<>();
        for (TenantRow t : tenants.values()) m.put(t.name(), new TenantConfig(t.name(), t.weight(), t.guaranteedGpus(), t.limitGpus()));
        return m;
    }

    private PoolSnapshot buildSnapshot(long now) {
        return new SnapshotBuilder(engine, active, tenants, nodes, telemetry, settings).build(now, QUEUE_IN_SNAPSHOT);
    }

    /** Stops the loop after the commands already queued, and commits what they decided. */
    @Override
    public void close() {
        running = false;
        try {
            loop.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
