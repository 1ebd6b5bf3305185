package io.gpupool.server.core;

import io.gpupool.agent.protocol.Grant;
import io.gpupool.engine.Scheduler;
import io.gpupool.engine.TenantConfig;
import io.gpupool.engine.state.Allocation;
import io.gpupool.store.NodeRow;
import io.gpupool.store.TenantRow;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The pool as the engine loop owns it, shared by the loop's concerns (job writes, the agent protocol, node liveness,
 * administration, recovery): the engine and its settings, the active jobs, tenants, nodes and agent nodes, the attempts
 * still stopping, and this iteration's writes. Only the loop thread touches it.
 */
final class PoolState {
    final Scheduler engine;
    SchedulerSettings settings;
    final Map<String, ActiveJob> active = new HashMap<>();
    /** The active tasks of each array, by array id (an array with none left is not here). */
    final Map<String, java.util.Set<String>> arrays = new HashMap<>();
    final Map<String, TenantRow> tenants;
    final Map<String, NodeRow> nodes;
    final AgentNodes agents;
    final StoppingAttempts stopping = new StoppingAttempts();
    final PendingWrites writes;
    final ServiceClock clock;
    final LoopListener listener;
    final UsageMeter usage;
    /** Something changed that a scheduling round should see. */
    boolean roundDue = true;

    PoolState(Scheduler engine, SchedulerSettings settings, Map<String, TenantRow> tenants, Map<String, NodeRow> nodes, AgentNodes agents,
              PendingWrites writes, ServiceClock clock, LoopListener listener) {
        this.engine = engine;
        this.settings = settings;
        this.tenants = tenants;
        this.nodes = nodes;
        this.agents = agents;
        this.writes = writes;
        this.clock = clock;
        this.listener = listener;
        this.usage = new UsageMeter(writes, listener, (node, gpu) -> {
            Integer id = engine.cluster().nodeId(node);
            return id == null ? "unknown" : engine.cluster().node(id).spec().gpus().get(gpu).model().id();
        });
    }

    /** The job is active from now on (queued, restored). */
    void activate(ActiveJob a) {
        active.put(a.id(), a);
        if (a.array != null) arrays.computeIfAbsent(a.array.arrayId(), k -> new java.util.LinkedHashSet<>()).add(a.id());
    }

    /** The job ended (or was refused after a restart). */
    void deactivate(ActiveJob a) {
        active.remove(a.id());
        if (a.array == null) return;
        java.util.Set<String> tasks = arrays.get(a.array.arrayId());
        if (tasks != null && tasks.remove(a.id()) && tasks.isEmpty()) arrays.remove(a.array.arrayId());
    }

    /** New work goes to a node only if an admin has not cordoned it and, for an agent's node, its agent reports. */
    void applySchedulable(String node) {
        NodeRow row = nodes.get(node);
        AgentNodes.Node a = agents.get(node);
        engine.setCordoned(node, row.cordoned() || (a != null && a.condition != AgentNodes.Condition.READY));
    }

    NodeRow requireNode(String node) {
        NodeRow n = nodes.get(node);
        if (n == null) throw ServiceException.notFound("node '" + node + "'");
        return n;
    }

    AgentNodes.Node requireAgentNode(String node) {
        AgentNodes.Node a = agents.get(node);
        if (a == null) throw ServiceException.notFound("node '" + node + "' (register it again)");
        return a;
    }

    /** The engine's tenants from the pool's. */
    Map<String, TenantConfig> tenantConfigs() {
        return tenantConfigs(tenants);
    }

    /** The engine's tenants from stored ones. */
    static Map<String, TenantConfig> tenantConfigs(Map<String, TenantRow> tenants) {
        Map<String, TenantConfig> m = new LinkedHashMap<>();
        for (TenantRow t : tenants.values()) m.put(t.name(), new TenantConfig(t.name(), t.weight(), t.guaranteedGpus(), t.limitGpus()));
        return m;
    }

    /** An allocation's grants by node name and GPU UUID. */
    List<Grant> grants(Allocation a) {
        return Grants.of(a, engine.cluster());
    }
}
