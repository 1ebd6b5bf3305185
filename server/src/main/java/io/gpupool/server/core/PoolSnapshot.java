package io.gpupool.server.core;

import io.gpupool.agent.protocol.AccountIsolation;
import io.gpupool.server.auth.Principal;

import java.util.List;
import java.util.Map;

/**
 * The pool at one instant, built by the engine loop every few hundred milliseconds: nodes and GPUs with
 * the shares they hold, the head of the queue with each job's reason for waiting, tenants' shares against
 * their entitlement, the advance reservations. Immutable; the dashboard, /api/v1/pool, SSE and the metrics all read it.
 */
public record PoolSnapshot(long atMs, String policy, String placement, List<NodeView> nodes, List<QueuedJob> queue,
                           int pendingCount, int runningCount, List<TenantShare> tenants, Totals totals, List<Views.Reservation> reservations) {

    /**
     * @param cordoned an admin cordoned it
     * @param state     static (declared by the server, no agent), waiting (for its agent's first report since the
     *                  server started), ready (its agent reports) or lost (no report for the node-lost timeout)
     * @param isolation what its agent enforces on jobs (cgroup mode, enforced and missing controls); null for a node
     *                  without an agent, an older agent, or until the agent registers after a server restart
     * @param accounts  whether its agent runs jobs as their own Unix accounts, and accounts it lacks; null for a node
     *                  without an agent (or one that has not registered since the server started)
     */
    public record NodeView(String name, String model, String productName, boolean cordoned, String source, String state, List<GpuView> gpus,
                           io.gpupool.agent.protocol.NodeConfinement isolation, AccountIsolation accounts) {
        public NodeView(String name, String model, String productName, boolean cordoned, String source, String state, List<GpuView> gpus) {
            this(name, model, productName, cordoned, source, state, gpus, null, null);
        }
    }

    /** One GPU: what is allocated on it (from the engine) and what it reports (telemetry, may be null). */
    public record GpuView(int index, String uuid, boolean healthy, int usedMilli, long usedMemoryMib, long memoryMib,
                          List<TaskView> tasks, GpuTelemetry.Sample telemetry) {}

    /** A job's share of one GPU; jobId and name are null when the caller may not see that tenant's jobs. */
    public record TaskView(String jobId, String tenant, String name, int milli, long memoryMib) {}

    /**
     * A queued job, or a job array as one line (its id, its first queued task's request and reason, and {@code array}
     * with its tasks counted per state; null for a job of its own).
     */
    public record QueuedJob(String id, String tenant, String name, int numGpus, int gpuMilli, long gpuMemMib, int priority,
                            long submittedMs, String waitReason, ArrayLine array) {}

    /** A job array's queue line: its cap (0 = none) and how many of its tasks are pending and running now. */
    public record ArrayLine(String id, int cap, int pending, int running) {}

    /**
     * @param share       GPUs held / GPUs in the pool
     * @param entitlement weight / sum of the weights of tenants with work
     */
    public record TenantShare(String name, double weight, double guaranteedGpus, double limitGpus, double gpusHeld,
                              double share, double entitlement, int pending, int running) {}

    /**
     * @param allocation  allocated compute / total compute (0..1)
     * @param utilization mean reported GPU utilization (0..1), null without telemetry
     */
    public record Totals(int nodes, int gpus, double gpusAllocated, double allocation, Double utilization) {}

    public static PoolSnapshot empty() {
        return new PoolSnapshot(0, "", "", List.of(), List.of(), 0, 0, List.of(), new Totals(0, 0, 0, 0, null), List.of());
    }

    /** What a member may see: other tenants' jobs become anonymous shares, their queued jobs are left out. */
    public PoolSnapshot visibleTo(Principal p) {
        if (p.isAdmin()) return this;
        List<NodeView> ns = nodes.stream().map(n -> new NodeView(n.name(), n.model(), n.productName(), n.cordoned(), n.source(), n.state(),
                n.gpus().stream().map(g -> new GpuView(g.index(), g.uuid(), g.healthy(), g.usedMilli(), g.usedMemoryMib(), g.memoryMib(),
                        g.tasks().stream().map(t -> p.sees(t.tenant()) ? t : new TaskView(null, t.tenant(), null, t.milli(), t.memoryMib())).toList(),
                        g.telemetry())).toList(), n.isolation(), n.accounts())).toList();
        List<QueuedJob> q = queue.stream().filter(j -> p.sees(j.tenant())).toList();
        return new PoolSnapshot(atMs, policy, placement, ns, q, pendingCount, runningCount, tenants, totals, reservations);
    }

    public Map<String, Object> summary() {
        return Map.of("atMs", atMs, "pending", pendingCount, "running", runningCount, "allocation", totals.allocation());
    }
}
