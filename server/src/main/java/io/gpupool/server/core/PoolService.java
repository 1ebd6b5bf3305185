package io.gpupool.server.core;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.gpupool.agent.gpu.GpuSample;
import io.gpupool.agent.link.AccountIsolation;
import io.gpupool.agent.link.DesiredState;
import io.gpupool.agent.link.JobStatusReport;
import io.gpupool.agent.link.LogChunk;
import io.gpupool.agent.link.LogOffset;
import io.gpupool.agent.link.NodeReport;
import io.gpupool.agent.run.GrantedGpu;
import io.gpupool.agent.run.JobLaunch;
import io.gpupool.engine.JobState;
import io.gpupool.engine.RoundResult;
import io.gpupool.engine.Scheduler;
import io.gpupool.engine.SubmitResult;
import io.gpupool.engine.TenantConfig;
import io.gpupool.engine.state.Allocation;
import io.gpupool.engine.state.GpuGrant;
import io.gpupool.engine.state.NodeState;
import io.gpupool.agent.confine.NodeConfinement;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.HostResources;
import io.gpupool.model.JobSpec;
import io.gpupool.model.NodeSpec;
import io.gpupool.model.SpecException;
import io.gpupool.store.AttemptRow;
import io.gpupool.store.AttemptUpdate;
import io.gpupool.store.EventRow;
import io.gpupool.store.GrantRow;
import io.gpupool.store.GroupCommitWriter;
import io.gpupool.store.JobRow;
import io.gpupool.store.NodeProgress;
import io.gpupool.store.NodeRow;
import io.gpupool.store.RecoveredState;
import io.gpupool.store.TenantRow;
import io.gpupool.store.TokenRow;
import io.gpupool.store.Write;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
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
 *
 * <p>It is also the server side of the agent protocol (docs/architecture.md): nodes register, their agents
 * report job statuses, output and telemetry and get the node's desired state back; a node that stops
 * reporting is declared lost, and once its lease, its agent's kill grace and the margin have run out its jobs
 * are requeued or failed by their restart policy. A requeued job starts no new attempt until its last one is
 * known to be gone ({@link StoppingAttempts}): a job never runs twice at once.
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
    private static final long LOST_CHECK_MS = 100;
    private static final ObjectMapper JSON = new ObjectMapper();
    /** {@code nodes.source} of a node its agent registered. */
    public static final String AGENT_SOURCE = "agent";

    private final GroupCommitWriter writer;
    private final GpuCatalog catalog;
    private final GpuTelemetry telemetry;
    private final ServiceClock clock;
    private final LoopListener listener;
    private final Consumer<List<Change>> publisher;
    private final PoolHistory history = new PoolHistory();
    private final AgentSettings agentSettings;
    private final String epoch;

    // ---- owned by the loop thread ----
    private final Scheduler engine;
    private SchedulerSettings settings;
    private final Map<String, ActiveJob> active = new HashMap<>();
    private final Map<String, String> idempotency;
    private final Map<String, TenantRow> tenants = new TreeMap<>();
    private final Map<String, NodeRow> nodes = new LinkedHashMap<>();
    private final AgentNodes agents = new AgentNodes();
    /** Whether the engine has the {@link AccountFilter} (from the first node that needs it on). */
    private boolean accountFilterAdded;
    private final OutputLedger output = new OutputLedger();
    private final StoppingAttempts stopping = new StoppingAttempts();
    private long nextLostCheckMs;
    /** Completes when everything handed to the writer so far is committed. */
    private CompletableFuture<Void> lastBatch = CompletableFuture.completedFuture(null);
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
                       AgentSettings agentSettings, GroupCommitWriter writer, GpuCatalog catalog, GpuTelemetry telemetry,
                       ServiceClock clock, LoopListener listener, Consumer<List<Change>> publisher) {
        this.agentSettings = agentSettings;
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
        String storedEpoch = recovered.settings().get("epoch");
        if (storedEpoch == null) {
            byte[] b = new byte[6];
            new SecureRandom().nextBytes(b);
            storedEpoch = HexFormat.of().formatHex(b);
            writes.add(new Write.PutSetting("epoch", storedEpoch));
        }
        this.epoch = storedEpoch;
        String stored = recovered.settings().get("scheduler");
        this.settings = stored != null ? SchedulerSettings.fromJson(stored, defaults) : defaults;
        List<NodeSpec> specs = nodes.values().stream().map(n -> NodeCodec.fromJson(n.spec(), catalog)).toList();
        this.engine = new Scheduler(new ClusterSpec(specs), settings.toConfig(tenantConfigs()));
        // a preempted job must not start again, in the same round or later, before its agents confirm its attempt gone
        engine.holdPreemptedJobs("its attempt is still stopping");
        for (NodeRow n : nodes.values()) {
            if (!n.source().equals(AGENT_SOURCE)) continue;
            NodeProgress p = recovered.progress().getOrDefault(n.name(), new NodeProgress(n.name(), 0, -1));
            // a restarted server waits for each agent's first report before placing work there; the node-lost
            // deadline counts from now
            AgentNodes.Node a = agents.add(n.name(), p.desiredVersion(), p.ackedStatusSeq(), p.leaseEpoch(), clock.nanos());
            recovered.tokens().stream().filter(t -> n.name().equals(t.node())).map(TokenRow::id).reduce((x, y) -> y)
                    .ifPresent(id -> a.credentialId = id);
        }
        for (NodeRow n : nodes.values()) applySchedulable(n.name());
        this.idempotency = new HashMap<>(recovered.idempotency());
        this.nextSeq = recovered.nextSeq();
        this.nextEventId = recovered.nextEventId();
        restoreJobs(recovered, now);
        // every agent gets its full desired state again after a restart (and stops what the store no longer wants)
        for (AgentNodes.Node a : agents.all()) agents.touch(a.name);
        awaitUnfinishedAttempts(recovered);
        flush();
        this.loop = Thread.ofPlatform().name("gpupool-engine-loop").start(this::runLoop);
    }

    // ---- commands (any thread) ------------------------------------------------------------------

    /** Queues a job for its tenant; completes once it is durable. Idempotent per (tenant, key). */
    public CompletableFuture<Views.Submitted> submit(JobRequest request, String idempotencyKey) {
        return call(() -> {
            requireStore();
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
                throw NeverRuns.error(r.status(), request);
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
            requireStore();
            ActiveJob a = active.get(jobId);
            if (a == null || !by.sees(a.tenant())) return CompletableFuture.completedFuture(null);
            long now = clock.now();
            engine.cancel(jobId, now);
            return end(a, "CANCELLED", null, "cancelled by " + by.role().wire() + " token " + by.tokenId(), now);
        });
    }

    /** Cordon (no new work) or uncordon a node. */
    public CompletableFuture<Void> setCordoned(String node, boolean cordoned) {
        return call(() -> {
            requireStore();
            NodeRow n = requireNode(node);
            engine.setCordoned(node, cordoned);
            NodeRow row = new NodeRow(n.name(), n.spec(), n.source(), cordoned, n.registeredMs());
            nodes.put(node, row);
            writes.add(new Write.PutNode(row));
            applySchedulable(node);
            dirty = true;
            return commitOfThisIteration();
        });
    }

    /** Cordons the node and sends its running jobs back to the queue (they restart elsewhere). */
    public CompletableFuture<List<String>> drain(String node) {
        return call(() -> {
            requireStore();
            NodeRow n = requireNode(node);
            NodeRow row = new NodeRow(n.name(), n.spec(), n.source(), true, n.registeredMs());
            nodes.put(node, row);
            writes.add(new Write.PutNode(row));
            applySchedulable(node);
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

    // ---- the agent protocol (any thread) ---------------------------------------------------------

    /**
     * What a node's agent says of Unix accounts. The first node that runs jobs under its agent's account, or lacks one,
     * adds the {@link AccountFilter} to the engine; a change lets waiting jobs be tried again.
     */
    private void noteAccounts(AgentNodes.Node a, AccountIsolation accounts) {
        if (accounts.equals(a.accounts)) return;
        if (!accountFilterAdded && (!accounts.switches() || !accounts.missing().isEmpty())) {
            engine.addFilter(new AccountFilter(node -> {
                AgentNodes.Node n = agents.get(node);
                return n == null ? null : n.accounts;
            }, job -> {
                ActiveJob j = active.get(job);
                return j == null ? null : j.request.runAs();
            }, tenant -> {
                TenantRow t = tenants.get(tenant);
                return t != null && t.sharedAccountNodes();
            }));
            accountFilterAdded = true;
        }
        if (!accounts.switches() && (a.accounts == null || a.accounts.switches())) LOG.warn("node {} runs every job as its agent's account: {}", a.name, accounts.reason());
        a.accounts = accounts;
        dirty = true;
    }

    /**
     * A node's agent registers: a new node joins the pool (its GPUs as the agent discovered them); a known one
     * must have the same GPUs. The node gets a new credential (the old one is revoked), its status seq restarts
     * where the agent's unacknowledged reports start, and its agent gets the full desired state next.
     *
     * @param credential      the node's new credential, minted by the caller, stored with the registration
     * @param firstPendingSeq the agent's oldest unacknowledged status seq (-1: not given)
     * @param confinement     what the node enforces on its jobs (shown by the node API; null from an older agent)
     * @param accounts        whether it runs jobs as their owners' Unix accounts, and accounts it lacks
     */
    public CompletableFuture<Views.Registered> registerAgent(NodeSpec spec, TokenRow credential, long firstPendingSeq, long killGraceMs,
                                                             NodeConfinement confinement, AccountIsolation accounts) {
        return call(() -> {
            long now = clock.now();
            String name = spec.name();
            NodeRow known = nodes.get(name);
            String json = NodeCodec.toJson(spec);
            if (known != null && !known.source().equals(AGENT_SOURCE)) {
                throw ServiceException.conflict("node_name", "node " + name + " is declared by the server (" + known.source()
                        + "), not by an agent; give this agent another --node-name");
            }
            if (known != null && !known.spec().equals(json)) {
                throw ServiceException.conflict("inventory", "node " + name + " is registered with other GPUs (or another machine uses "
                        + "this name); give this agent another --node-name, or keep the GPUs it was registered with");
            }
            AgentNodes.Node a;
            if (known == null) {
                try {
                    engine.addNode(spec);
                } catch (SpecException e) {
                    throw ServiceException.invalid(e.field(), e.getMessage());
                }
                NodeRow row = new NodeRow(name, json, AGENT_SOURCE, false, now);
                nodes.put(name, row);
                writes.add(new Write.PutNode(row));
                a = agents.add(name, 0, -1, 0, clock.nanos());
                LOG.info("node {} joined with {} GPUs", name, spec.gpus().size());
            } else {
                a = agents.get(name);
            }
            if (firstPendingSeq >= 0) a.ackedSeq = firstPendingSeq - 1;
            a.confinement = confinement;
            String revoked = a.credentialId;
            if (revoked != null) writes.add(new Write.DeleteToken(revoked));
            writes.add(new Write.PutToken(credential));
            a.credentialId = credential.id();
            seen(a, killGraceMs);
            noteAccounts(a, accounts);
            agents.touch(name); // the agent has no desired state in memory after its own restart: send it all
            dirty = true;
            Views.Registered r = new Views.Registered(name, epoch, agentSettings.reportIntervalMs(), agentSettings.nodeLostTimeoutMs(), revoked,
                    a.leaseEpoch);
            return commitOfThisIteration().thenApply(v -> r);
        });
    }

    /**
     * An agent's report: telemetry, job status reports (each seq applied once), output chunks (appended by
     * offset). Answers, once all of it is committed, with the highest seq applied, what output is held and
     * the node's desired state if it is newer than what the agent applied.
     *
     * @param stored for every output stream in the report, the length the store held before this call
     */
    public CompletableFuture<Views.Reported> report(String node, NodeReport r, Map<OutputLedger.Key, Long> stored) {
        return call(() -> {
            AgentNodes.Node a = requireAgentNode(node);
            int gpuCount = engine.cluster().node(engine.cluster().nodeId(node)).gpuCount();
            for (int i = 0; i < r.gpus().size(); i++) {
                int index = r.gpus().get(i).index();
                if (index < 0 || index >= gpuCount) throw ServiceException.invalid("gpus[" + i + "].index", "node " + node + " has GPUs 0.." + (gpuCount - 1) + ", got " + index);
            }
            if (r.leaseEpoch() < a.leaseEpoch) {
                // sent before its agent heard that the node was declared lost: applied, it could revive what the server
                // gave up. Nothing in it counts, not even as a sign of life; the agent reports again under the new epoch.
                DesiredState desired = a.version > r.appliedDesiredVersion() ? desiredState(a) : null;
                Views.Reported stale = new Views.Reported(a.ackedSeq, desired, List.of(), a.nextChange, a.leaseEpoch);
                return commitOfThisIteration().thenApply(v -> stale);
            }
            if (r.leaseEpoch() > a.leaseEpoch) {
                // the agent holds an epoch this store never reached (it was replaced or restored): go on from there
                a.leaseEpoch = r.leaseEpoch();
                a.progressDirty = true;
            }
            long now = clock.now();
            seen(a, r.killGraceMs());
            if (r.accounts() != null) noteAccounts(a, r.accounts());
            for (GpuSample g : r.gpus()) {
                long total = g.memoryTotalMib() == null ? 0 : g.memoryTotalMib();
                long used = g.memoryUsedMib() == null ? 0 : g.memoryUsedMib();
                telemetry.put(node, g.index(), new GpuTelemetry.Sample(g.utilizationPercent() == null ? 0 : g.utilizationPercent(),
                        used, Math.max(0, total - used), g.powerWatts() == null ? 0 : g.powerWatts(),
                        g.temperatureC() == null ? 0 : g.temperatureC(), now));
            }
            for (JobStatusReport st : r.statuses()) {
                if (st.seq() <= a.ackedSeq) continue; // applied before: its answer was lost
                applyStatus(node, st, now);
                a.ackedSeq = st.seq();
                a.progressDirty = true;
            }
            List<LogOffset> acks = new ArrayList<>();
            for (LogChunk c : r.logs()) {
                OutputLedger.Appended out = output.append(node, c, stored.getOrDefault(OutputLedger.key(c, node), 0L), now);
                if (out.write() != null) writes.add(new Write.AppendOutput(out.write()));
                acks.add(out.ack());
            }
            releaseHolds(stopping.reported(node, r.appliedDesiredVersion(), r.running()));
            if (r.appliedDesiredVersion() > a.version) {
                // the agent applied a version this store never reached (its store was replaced or restored): go beyond it
                a.version = r.appliedDesiredVersion();
                agents.touch(node);
            }
            DesiredState desired = a.version > r.appliedDesiredVersion() ? desiredState(a) : null;
            Views.Reported answer = new Views.Reported(a.ackedSeq, desired, acks, a.nextChange, a.leaseEpoch);
            return commitOfThisIteration().thenApply(v -> answer);
        });
    }

    /** The node's desired state if its version is above {@code applied}, else null (after a waiting report woke). */
    public CompletableFuture<DesiredState> desired(String node, long applied) {
        return call(() -> {
            AgentNodes.Node a = requireAgentNode(node);
            seen(a, a.killGraceMs);
            DesiredState d = a.version > applied ? desiredState(a) : null;
            return commitOfThisIteration().thenApply(v -> d);
        });
    }

    /** Creates ({@code create}) or updates a tenant's weight, guarantee and limit; its jobs only on own-account nodes. */
    public CompletableFuture<TenantRow> putTenant(String name, double weight, double guaranteed, double limit, boolean create) {
        return putTenant(name, weight, guaranteed, limit, false, create);
    }

    /**
     * Creates ({@code create}) or updates a tenant: weight, guarantee, limit, and whether its jobs may run on nodes that
     * run every job as the agent's own account ({@code sharedAccountNodes}).
     */
    public CompletableFuture<TenantRow> putTenant(String name, double weight, double guaranteed, double limit, boolean sharedAccountNodes,
                                                  boolean create) {
        return call(() -> {
            requireStore();
            TenantRow old = tenants.get(name);
            if (create && old != null) throw ServiceException.conflict("name", "tenant '" + name + "' already exists");
            if (!create && old == null) throw ServiceException.notFound("tenant '" + name + "'");
            try {
                new TenantConfig(name, weight, guaranteed, limit);
            } catch (SpecException e) {
                // the engine names the cluster file's fields (guaranteed_gpus); the caller sent the API's
                String field = switch (e.field()) {
                    case "guaranteed_gpus" -> "guaranteedGpus";
                    case "limit_gpus" -> "limitGpus";
                    default -> e.field();
                };
                throw ServiceException.invalid(field, e.rule());
            }
            TenantRow row = new TenantRow(name, weight, guaranteed, limit, old != null ? old.createdMs() : clock.now(), sharedAccountNodes);
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
            requireStore();
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
                long waitMs = Math.max(1, Math.min(Math.min(nextPeriodicRoundMs, lastSnapshotMs + SNAPSHOT_INTERVAL_MS), nextLostCheckMs) - now);
                if (dirty) waitMs = Math.max(1, Math.min(waitMs, (nextRoundNanos - System.nanoTime()) / 1_000_000));
                Runnable first = inbox.poll(waitMs, TimeUnit.MILLISECONDS);
                if (first != null) {
                    first.run();
                    Runnable next;
                    for (int n = 1; n < MAX_COMMANDS_PER_ITERATION && (next = inbox.poll()) != null; n++) next.run();
                }
                now = clock.now();
                if (now >= nextLostCheckMs) {
                    checkNodesLost(now);
                    nextLostCheckMs = now + LOST_CHECK_MS;
                }
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
            a.row = a.row.withState("RUNNING", now, null, j.preemptions(), null, null).nextAttempt();
            List<GrantRow> grants = grantRows(j.allocation());
            writes.add(new Write.UpdateJob(a.row));
            writes.add(new Write.SetAllocation(id, grants));
            a.placedOn(nodesOf(grants));
            for (String node : a.nodes) {
                writes.add(new Write.InsertAttempt(new AttemptRow(id, a.row.attempt(), node, grantsJson(j.allocation(), node), now,
                        "ASSIGNED", null, null, null, null, null)));
                agents.touch(node);
            }
            event(a, "STARTED", "attempt " + a.row.attempt() + ": " + describe(j.allocation()), now);
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
        List<CompletableFuture<Void>> nodeChanges = new ArrayList<>();
        for (AgentNodes.Node a : agents.all()) {
            if (a.progressDirty) writes.add(new Write.PutNodeProgress(a.progress()));
            a.progressDirty = false;
            if (a.changed) {
                nodeChanges.add(a.nextChange);
                a.nextChange = new CompletableFuture<>();
                a.changed = false;
            }
        }
        if (writes.isEmpty()) {
            // nothing new to write, but an answer must not overtake the commit of earlier decisions it reflects
            if (done != null) lastBatch.whenComplete((v, e) -> done.complete(null));
            return;
        }
        List<Change> published = List.copyOf(changes);
        List<Write> batch = List.copyOf(writes);
        writes.clear();
        changes.clear();
        CompletableFuture<Void> committed = writer.submit(batch);
        lastBatch = committed.exceptionally(e -> null);
        committed.whenComplete((v, e) -> {
            nodeChanges.forEach(f -> f.complete(null)); // waiting reports ask again (and find out if the commit failed)
            if (e != null) {
                if (done != null) done.completeExceptionally(new ServiceException(ServiceException.Kind.UNAVAILABLE, null, "the store did not commit: " + e.getMessage()));
                return;
            }
            if (done != null) done.complete(null);
            publisher.accept(published);
        });
    }

    /**
     * While the store's commits fail (its database is down), a user's change is refused at once (503) and changes
     * nothing. Taken in, it would wait for a commit that may come minutes later: the caller gets 503 after 30 s
     * and the change is made anyway when the database is back.
     */
    private void requireStore() {
        if (!writer.healthy()) {
            throw new ServiceException(ServiceException.Kind.UNAVAILABLE, null, "the store is unavailable (its database does not commit); retry later");
        }
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
        if (held) {
            writes.add(new Write.SetAllocation(a.id(), List.of()));
            releaseAttempt(a, state.toLowerCase(java.util.Locale.ROOT) + (message == null ? "" : ": " + message));
        }
        event(a, state, message, now);
        active.remove(a.id());
        stopping.forget(a.id());
        engine.forget(a.id());
        listener.finished(a.tenant(), state);
        dirty = true;
        JobRow row = a.row;
        return commitOfThisIteration().thenApply(v -> row);
    }

    /**
     * A running job went back to the queue (preempted by the policy, drained, lost, or not restorable). It is held
     * until every node of the attempt it leaves has confirmed the attempt gone ({@link StoppingAttempts}).
     */
    private void requeued(ActiveJob a, String type, String why, long now) {
        a.row = a.row.withState("PENDING", a.row.startedMs(), null, a.row.preemptions() + 1, null, why);
        writes.add(new Write.UpdateJob(a.row));
        writes.add(new Write.SetAllocation(a.id(), List.of()));
        releaseAttempt(a, type.toLowerCase(java.util.Locale.ROOT) + ": " + why);
        for (String node : a.nodes) {
            AgentNodes.Node n = agents.get(node);
            // a static node runs nothing; an agent that reported this attempt's end has no process of it left
            if (n != null && !a.endedOn.contains(node)) stopping.add(a.id(), a.row.attempt(), node, n.version);
        }
        if (stopping.waiting(a.id())) engine.hold(a.id(), stopping.reason(a.id()));
        else engine.releaseHold(a.id()); // nothing can still run (the engine holds what a round preempts)
        event(a, type, why, now);
    }

    /**
     * The server no longer wants the current attempt (it ended, was cancelled, preempted, requeued): its nodes
     * get a new desired state without it, and its rows become STOPPING where the agent has not reported an end.
     */
    private void releaseAttempt(ActiveJob a, String why) {
        for (String node : a.nodes) {
            writes.add(new Write.UpdateAttempt(new AttemptUpdate(a.id(), a.row.attempt(), node, "STOPPING", null, null, null, null,
                    "stop requested: " + why)));
            agents.touch(node);
        }
    }

    private void event(ActiveJob a, String type, String detail, long now) {
        writes.add(new Write.InsertEvent(new EventRow(nextEventId++, a.id(), now, type, detail)));
        changes.add(new Change(type, a.id(), a.tenant(), a.row.state(), now, detail));
    }

    // ---- the agent protocol (loop thread) --------------------------------------------------------

    /**
     * One status report of an agent. Only a report about a job's current attempt on that node changes the
     * job; any other (an attempt the server already ended, e.g. after declaring the node lost) is recorded on
     * its attempt row and changes nothing else.
     */
    private void applyStatus(String node, JobStatusReport st, long now) {
        String phase = st.phase().name();
        writes.add(new Write.UpdateAttempt(new AttemptUpdate(st.jobId(), st.attempt(), node, phase, st.pid(), st.startedAtMs(),
                st.endedAtMs(), st.exitCode(), st.message())));
        if (st.phase().terminal()) releaseHolds(stopping.ended(node, st.jobId(), st.attempt()));
        ActiveJob a = active.get(st.jobId());
        if (a == null || a.row.attempt() != st.attempt() || !a.nodes.contains(node)) return;
        if (st.phase().terminal()) a.endedOn.add(node);
        String where = "node " + node + ": " + (st.message() == null ? phase.toLowerCase(java.util.Locale.ROOT) : st.message());
        if (!a.row.state().equals("RUNNING")) {
            // the attempt was requeued when its node was declared lost, but it had finished: its result stands
            if (st.phase() == io.gpupool.agent.run.JobPhase.SUCCEEDED && a.row.state().equals("PENDING") && a.nodes.equals(Set.of(node))) {
                engine.cancel(a.id(), now);
                end(a, "SUCCEEDED", st.exitCode(), "attempt " + st.attempt() + " finished on node " + node + " while the node was out of reach", now);
            }
            return;
        }
        switch (st.phase()) {
            case RUNNING -> {
                if (a.confirmed.add(node)) event(a, "RUNNING", "attempt " + st.attempt() + " on node " + node + ", pid " + st.pid(), now);
                else if (st.message() != null && st.message().startsWith("warning")) event(a, "WARNING", where, now);
            }
            case SUCCEEDED -> {
                a.succeeded.add(node);
                if (a.succeeded.containsAll(a.nodes)) {
                    engine.complete(a.id(), now);
                    end(a, "SUCCEEDED", st.exitCode(), null, now);
                }
            }
            case FAILED -> {
                if (lacksAccount(node, a)) {
                    // the node's fault, not the job's: it runs again elsewhere (the account filter keeps it off this node)
                    lostAttempt(a, where, now);
                } else {
                    engine.complete(a.id(), now);
                    end(a, "FAILED", st.exitCode(), where, now);
                }
            }
            // the server did not ask for this end (it would have released the attempt first): the run is lost
            case STOPPED, LOST -> lostAttempt(a, where, now);
        }
    }

    /** Whether the node's agent says it lacks the job's Unix account (an attempt there could not start). */
    private boolean lacksAccount(String node, ActiveJob a) {
        AgentNodes.Node n = agents.get(node);
        return a.request.runAs() != null && n != null && n.accounts != null && n.accounts.missing().contains(a.request.runAs());
    }

    /** A run lost to the infrastructure: the job runs again as a new attempt, or fails, by its restart policy. */
    private void lostAttempt(ActiveJob a, String why, long now) {
        if (a.request.restartPolicy().equals(JobRequest.FAIL)) {
            engine.complete(a.id(), now);
            end(a, "FAILED", null, why + " (restart policy fail)", now);
        } else {
            engine.preempt(a.id(), now);
            requeued(a, "REQUEUED", why, now);
            dirty = true;
        }
    }

    /**
     * Nodes whose agent has had no report applied for the node-lost timeout are lost; once the agent's kill grace and
     * the margin have passed as well, their attempts are given up. Measured on the monotonic clock.
     */
    private void checkNodesLost(long now) {
        long nowNanos = clock.nanos();
        for (AgentNodes.Node n : agents.all()) {
            long silentMs = n.silentMs(nowNanos);
            if (n.condition != AgentNodes.Condition.LOST && silentMs > agentSettings.nodeLostTimeoutMs()) nodeLost(n, silentMs, now);
            if (n.condition == AgentNodes.Condition.LOST && !n.attemptsGivenUp && silentMs >= agentSettings.giveUpAfterMs(n.killGraceMs)) {
                giveUpAttempts(n, silentMs, now);
            }
        }
        output.forgetOld(now);
    }

    /**
     * No new work for the node, and a new lease epoch: a report its agent sent before hearing of it is not applied.
     * Its attempts stay (their agent may still be stopping them) until {@link #giveUpAttempts}.
     */
    private void nodeLost(AgentNodes.Node n, long silentMs, long now) {
        long giveUpInMs = agentSettings.giveUpAfterMs(n.killGraceMs) - silentMs;
        LOG.warn("node {} lost: no report for {} s; its jobs run elsewhere in {} s (its agent's lease, kill grace {} s and the margin) "
                + "unless it reports again", n.name, silentMs / 1000, Math.max(0, giveUpInMs) / 1000, n.killGraceMs / 1000);
        n.condition = AgentNodes.Condition.LOST;
        n.leaseEpoch++;
        n.progressDirty = true;
        applySchedulable(n.name);
        for (ActiveJob a : List.copyOf(active.values())) {
            if (!a.row.state().equals("RUNNING") || !a.nodes.contains(n.name)) continue;
            event(a, "WARNING", "node " + n.name + " lost: no report for " + silentMs / 1000 + " s; the job runs again (or fails, by its "
                    + "restart policy) in " + Math.max(0, giveUpInMs) / 1000 + " s, once its processes there must be gone, unless the node "
                    + "reports again", now);
        }
        dirty = true;
    }

    /**
     * The lost node's lease ran out, then its agent's kill grace and the margin: whatever ran there has been stopped by
     * its agent or its fence keeper. Its attempts end as LOST and their jobs are requeued or failed by restart policy.
     */
    private void giveUpAttempts(AgentNodes.Node n, long silentMs, long now) {
        String why = "node " + n.name + " lost: no report for " + silentMs / 1000 + " s";
        LOG.warn("{}; its jobs are requeued or failed by their restart policy", why);
        n.attemptsGivenUp = true;
        for (ActiveJob a : List.copyOf(active.values())) {
            if (!a.row.state().equals("RUNNING") || !a.nodes.contains(n.name)) continue;
            writes.add(new Write.UpdateAttempt(new AttemptUpdate(a.id(), a.row.attempt(), n.name, "LOST", null, null, now, null, why)));
            a.endedOn.add(n.name);
            lostAttempt(a, why, now);
        }
        releaseHolds(stopping.nodeGone(n.name));
        agents.touch(n.name);
    }

    /** Jobs whose last attempt every node has confirmed gone may start a new one. */
    private void releaseHolds(List<String> jobs) {
        for (String id : jobs) {
            ActiveJob a = active.get(id);
            if (a != null && a.row.state().equals("PENDING") && engine.releaseHold(id)) dirty = true;
        }
    }

    /** After a restart: queued jobs whose earlier attempt no agent has reported ended wait for it as before. */
    private void awaitUnfinishedAttempts(RecoveredState r) {
        r.unfinishedAttempts().forEach((job, nodes) -> {
            ActiveJob a = active.get(job);
            if (a == null || !a.row.state().equals("PENDING")) return;
            nodes.forEach((node, attempt) -> {
                AgentNodes.Node n = agents.get(node);
                if (n != null) stopping.add(job, attempt, node, n.version);
            });
            if (stopping.waiting(job)) engine.hold(job, stopping.reason(job));
        });
    }

    /**
     * A report of the node's agent was applied: it is alive. A waiting or lost node is ready again (and schedulable
     * unless cordoned); a lost one whose attempts were not given up yet keeps them.
     *
     * @param killGraceMs the agent's kill grace as it says (0: not said)
     */
    private void seen(AgentNodes.Node a, long killGraceMs) {
        a.lastSeenNanos = clock.nanos();
        if (killGraceMs > 0) a.killGraceMs = killGraceMs;
        if (a.condition == AgentNodes.Condition.READY) return;
        if (a.condition == AgentNodes.Condition.LOST) LOG.info("node {} reports again", a.name);
        a.condition = AgentNodes.Condition.READY;
        a.attemptsGivenUp = false;
        applySchedulable(a.name);
        agents.touch(a.name);
        dirty = true;
    }

    /** New work goes to a node only if an admin has not cordoned it and, for an agent's node, its agent reports. */
    private void applySchedulable(String node) {
        NodeRow row = nodes.get(node);
        AgentNodes.Node a = agents.get(node);
        engine.setCordoned(node, row.cordoned() || (a != null && a.condition != AgentNodes.Condition.READY));
    }

    private AgentNodes.Node requireAgentNode(String node) {
        AgentNodes.Node a = agents.get(node);
        if (a == null) throw ServiceException.notFound("node '" + node + "' (register it again)");
        return a;
    }

    /** Every attempt placed on the node, with the node's grants in CUDA order. */
    private DesiredState desiredState(AgentNodes.Node n) {
        int nodeId = engine.cluster().nodeId(n.name);
        List<JobLaunch> jobs = new ArrayList<>();
        for (JobState j : engine.runningJobs()) {
            List<GrantedGpu> mine = new ArrayList<>();
            for (GpuGrant g : j.allocation().grants()) {
                if (g.node() != nodeId) continue;
                String uuid = engine.cluster().node(nodeId).spec().gpus().get(g.gpu()).uuid();
                mine.add(g.exclusive() ? GrantedGpu.whole(uuid) : new GrantedGpu(uuid, g.milli(), g.memoryMib()));
            }
            if (mine.isEmpty()) continue;
            ActiveJob a = active.get(j.id());
            // the replica's host CPU and RAM become its cgroup's limits on the node (none asked: no limit)
            jobs.add(new JobLaunch(j.id(), a.row.attempt(), a.request.command(), a.request.env(), a.request.workDir(), mine,
                    new HostResources(a.request.cpuMilli(), a.request.hostMemMib()), a.request.runAs()));
        }
        jobs.sort(Comparator.comparing(JobLaunch::jobId));
        return new DesiredState(n.version, jobs);
    }

    private static Set<String> nodesOf(List<GrantRow> grants) {
        Set<String> out = new TreeSet<>();
        for (GrantRow g : grants) out.add(g.node());
        return out;
    }

    /** A job's grants on one node, as stored with its attempt there. */
    private String grantsJson(Allocation a, String node) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Views.Grant g : grants(a)) {
            if (!g.node().equals(node)) continue;
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("replica", g.replica());
            m.put("gpu", g.gpu());
            m.put("uuid", g.uuid());
            m.put("milli", g.milli());
            m.put("memoryMib", g.memoryMib());
            m.put("exclusive", g.exclusive());
            out.add(m);
        }
        try {
            return JSON.writeValueAsString(out);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
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
                a.placedOn(nodesOf(r.allocations().getOrDefault(row.id(), List.of())));
                r.attemptStates().getOrDefault(row.id(), Map.of()).forEach((node, state) -> {
                    if (state.equals("SUCCEEDED")) a.succeeded.add(node);
                    if (Set.of("SUCCEEDED", "FAILED", "STOPPED", "LOST").contains(state)) a.endedOn.add(node);
                    if (!state.equals("ASSIGNED")) a.confirmed.add(node);
                });
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
                releaseAttempt(a, "failed after a restart");
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
        Map<String, String> conditions = new HashMap<>();
        Map<String, NodeConfinement> isolation = new HashMap<>();
        Map<String, AccountIsolation> accounts = new HashMap<>();
        for (AgentNodes.Node a : agents.all()) {
            conditions.put(a.name, a.condition.wire());
            if (a.confinement != null) isolation.put(a.name, a.confinement);
            if (a.accounts != null) accounts.put(a.name, a.accounts);
        }
        return new SnapshotBuilder(engine, active, tenants, nodes, conditions, isolation, accounts, telemetry, settings).build(now, QUEUE_IN_SNAPSHOT);
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
