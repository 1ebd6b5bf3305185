package io.gpupool.server.core;

import io.gpupool.engine.Scheduler;
import io.gpupool.engine.SubmitResult;
import io.gpupool.engine.state.Allocation;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.JobSpec;
import io.gpupool.model.NodeSpec;
import io.gpupool.store.GrantRow;
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
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;

/**
 * Rebuilds the pool when the service starts, from what the store recovered: nodes (and the static ones not yet known),
 * tenants, settings and the engine; the agent nodes' progress; the active jobs, back in the queue or on the GPUs the
 * store recorded. Runs before the engine loop starts.
 */
final class PoolRecovery {
    private static final Logger LOG = LoggerFactory.getLogger(PoolRecovery.class);

    private final RecoveredState recovered;
    private final GpuCatalog catalog;
    private final ServiceClock clock;
    private final long now;

    PoolRecovery(RecoveredState recovered, GpuCatalog catalog, ServiceClock clock) {
        this.recovered = recovered;
        this.catalog = catalog;
        this.clock = clock;
        this.now = clock.now();
    }

    /**
     * The pool's nodes, tenants, settings and engine, with its agent nodes waiting for their first report.
     *
     * @param staticNodes nodes declared on the command line (or by the demo), with their source label
     */
    PoolState pool(Map<NodeSpec, String> staticNodes, SchedulerSettings defaults, PendingWrites writes, LoopListener listener) {
        Map<String, TenantRow> tenants = new TreeMap<>();
        Map<String, NodeRow> nodes = new LinkedHashMap<>();
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
        SchedulerSettings settings = stored != null ? SchedulerSettings.fromJson(stored, defaults) : defaults;
        List<NodeSpec> specs = nodes.values().stream().map(n -> NodeCodec.fromJson(n.spec(), catalog)).toList();
        AgentNodes agents = new AgentNodes();
        Scheduler engine = new Scheduler(new ClusterSpec(specs), settings.toConfig(PoolState.tenantConfigs(tenants)));
        // a preempted job must not start again, in the same round or later, before its agents confirm its attempt gone
        engine.holdPreemptedJobs("its attempt is still stopping");
        PoolState pool = new PoolState(engine, settings, tenants, nodes, agents, writes, clock, listener);
        for (NodeRow n : nodes.values()) {
            if (!n.source().equals(AgentProtocol.AGENT_SOURCE)) continue;
            NodeProgress p = recovered.progress().getOrDefault(n.name(), new NodeProgress(n.name(), 0, -1));
            // a restarted server waits for each agent's first report before placing work there; the node-lost
            // deadline counts from now
            AgentNodes.Node a = agents.add(n.name(), p.desiredVersion(), p.ackedStatusSeq(), p.leaseEpoch(), clock.nanos());
            recovered.tokens().stream().filter(t -> n.name().equals(t.node())).map(TokenRow::id).reduce((x, y) -> y)
                    .ifPresent(id -> a.credentialId = id);
        }
        for (NodeRow n : nodes.values()) pool.applySchedulable(n.name());
        return pool;
    }

    /** The store's epoch (what agents tell one store from another by), made and written on its first start. */
    String epoch(PendingWrites writes) {
        String stored = recovered.settings().get("epoch");
        if (stored != null) return stored;
        byte[] b = new byte[6];
        new SecureRandom().nextBytes(b);
        String epoch = HexFormat.of().formatHex(b);
        writes.add(new Write.PutSetting("epoch", epoch));
        return epoch;
    }

    /**
     * Puts the active jobs back; then every agent gets its full desired state again (and stops what the store no
     * longer wants), and queued jobs whose earlier attempt no agent has reported ended wait for it as before.
     */
    void restore(PoolState pool, JobLifecycle jobs) {
        restoreJobs(pool, jobs);
        for (AgentNodes.Node a : pool.agents.all()) pool.agents.touch(a.name);
        awaitUnfinishedAttempts(pool);
        jobs.restoreWorkflows(now);
    }

    /**
     * Queues the stored active jobs again in arrival order and puts running ones back on the GPUs the store
     * recorded. The engine checks every grant against the GPU's capacity; a job whose grants no longer fit
     * (or whose node is gone) goes back to the queue instead, so no GPU is ever over capacity.
     */
    private void restoreJobs(PoolState pool, JobLifecycle jobs) {
        Scheduler engine = pool.engine;
        for (JobRow row : recovered.activeJobs()) {
            StoredSpec stored = StoredSpec.read(row.spec(), catalog);
            JobRequest req = stored.request();
            JobSpec spec = req.toJobSpec(row.id(), row.submittedMs());
            ActiveJob a = new ActiveJob(row, req, stored.array(), CompletableFuture.completedFuture(null));
            a.dependency = stored.dependency();
            a.heldBy = stored.heldBy();
            String notRestored = null;
            if (row.state().equals("RUNNING")) {
                List<GrantRow> grants = recovered.allocations().getOrDefault(row.id(), List.of());
                a.placedOn(Grants.nodes(grants));
                recovered.attemptStates().getOrDefault(row.id(), Map.of()).forEach((node, state) -> {
                    if (state.equals("SUCCEEDED")) a.succeeded.add(node);
                    if (Set.of("SUCCEEDED", "FAILED", "STOPPED", "LOST", "TIMEOUT").contains(state)) a.endedOn.add(node);
                    if (!state.equals("ASSIGNED")) a.confirmed.add(node);
                });
                try {
                    Allocation recorded = Grants.allocation(row.id(), grants, engine.cluster());
                    SubmitResult back = engine.restoreRunning(spec, recorded, row.startedMs(), now);
                    if (back.accepted()) {
                        jobs.track(a);
                        jobs.capArrayTask(a);
                        jobs.restoreReservation(a);
                        continue;
                    }
                    notRestored = back.reason();
                } catch (IllegalStateException e) {
                    notRestored = e.getMessage();
                }
            }
            SubmitResult s = engine.submit(spec, now);
            jobs.track(a);
            if (!s.accepted()) {
                engine.forget(row.id());
                jobs.failedAfterRestart(a, s.reason(), now);
                continue;
            }
            jobs.capArrayTask(a);
            jobs.restoreReservation(a);
            if (notRestored != null) {
                LOG.warn("job {} cannot resume on its recorded GPUs ({}); it goes back to the queue", row.id(), notRestored);
                jobs.requeued(a, "REQUEUED", "its GPUs could not be restored after a restart: " + notRestored, now);
            }
        }
        if (!recovered.activeJobs().isEmpty()) {
            LOG.info("restored {} active jobs ({} running)", recovered.activeJobs().size(), engine.runningJobs().size());
        }
        engine.checkConsistency();
    }

    /** Queued jobs whose earlier attempt no agent has reported ended wait for it as before. */
    private void awaitUnfinishedAttempts(PoolState pool) {
        recovered.unfinishedAttempts().forEach((job, nodes) -> {
            ActiveJob a = pool.active.get(job);
            if (a == null || !a.row.state().equals("PENDING")) return;
            nodes.forEach((node, attempt) -> {
                AgentNodes.Node n = pool.agents.get(node);
                if (n != null) pool.stopping.add(job, attempt, node, n.version);
            });
            if (pool.stopping.waiting(job)) pool.engine.hold(job, pool.stopping.reason(job));
        });
    }
}
