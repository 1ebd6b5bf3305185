package io.gpupool.server.core;

import io.gpupool.agent.protocol.AccountIsolation;
import io.gpupool.agent.protocol.Grant;
import io.gpupool.agent.protocol.NodeConfinement;
import io.gpupool.engine.JobState;
import io.gpupool.engine.Scheduler;
import io.gpupool.engine.TenantLedger;
import io.gpupool.engine.state.NodeState;
import io.gpupool.model.GpuDevice;
import io.gpupool.store.NodeRow;
import io.gpupool.store.TenantRow;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Builds a {@link PoolSnapshot} from the engine's state; runs on the engine loop thread. */
final class SnapshotBuilder {
    private final Scheduler engine;
    private final Map<String, ActiveJob> active;
    private final Map<String, TenantRow> tenants;
    private final Map<String, NodeRow> nodes;
    private final GpuTelemetry telemetry;
    /** Agent nodes' state (waiting, ready, lost); other nodes are static. */
    private final Map<String, String> conditions = new HashMap<>();
    /** What agent nodes enforce on their jobs, as registered. */
    private final Map<String, NodeConfinement> isolation = new HashMap<>();
    /** What agent nodes said of Unix accounts. */
    private final Map<String, AccountIsolation> accounts = new HashMap<>();
    private final SchedulerSettings settings;

    private record GpuKey(String node, int gpu) {}

    SnapshotBuilder(PoolState pool, GpuTelemetry telemetry) {
        this.engine = pool.engine;
        this.active = pool.active;
        this.tenants = pool.tenants;
        this.nodes = pool.nodes;
        this.telemetry = telemetry;
        this.settings = pool.settings;
        for (AgentNodes.Node a : pool.agents.all()) {
            conditions.put(a.name, a.condition.wire());
            if (a.confinement != null) isolation.put(a.name, a.confinement);
            if (a.accounts != null) accounts.put(a.name, a.accounts);
        }
    }

    PoolSnapshot build(long now, int queueLimit, List<Views.Reservation> reservations) {
        // tasks per GPU from the running jobs' grants
        Map<GpuKey, List<PoolSnapshot.TaskView>> tasks = new HashMap<>();
        Map<String, int[]> counts = new TreeMap<>(); // tenant -> {pending, running}
        Map<String, int[]> arrayCounts = new HashMap<>(); // array id -> {pending, running}
        for (JobState j : engine.runningJobs()) {
            ActiveJob a = active.get(j.id());
            counts.computeIfAbsent(j.spec().tenant(), k -> new int[2])[1]++;
            if (a != null && a.array != null) arrayCounts.computeIfAbsent(a.array.arrayId(), k -> new int[2])[1]++;
            for (Grant g : Grants.of(j.allocation(), engine.cluster())) {
                tasks.computeIfAbsent(new GpuKey(g.node(), g.gpu()), k -> new ArrayList<>())
                        .add(new PoolSnapshot.TaskView(j.id(), j.spec().tenant(), a != null ? a.request.name() : "", g.milli(), g.memoryMib()));
            }
        }
        List<PoolSnapshot.NodeView> nodeViews = new ArrayList<>();
        double utilSum = 0;
        int utilCount = 0;
        int gpus = 0;
        for (NodeState n : engine.cluster().nodes()) {
            List<PoolSnapshot.GpuView> gv = new ArrayList<>();
            for (GpuDevice d : n.spec().gpus()) {
                int g = d.index();
                GpuTelemetry.Sample s = telemetry.get(n.name(), g);
                if (s != null) {
                    utilSum += s.utilPercent() / 100.0;
                    utilCount++;
                }
                gv.add(new PoolSnapshot.GpuView(g, d.uuid(), n.healthy(g), 1000 - n.freeMilli(g), n.memoryCapacityMib() - n.freeMemoryMib(g),
                        n.model().memoryMib(), tasks.getOrDefault(new GpuKey(n.name(), g), List.of()), s));
                gpus++;
            }
            NodeRow row = nodes.get(n.name());
            nodeViews.add(new PoolSnapshot.NodeView(n.name(), n.model().id(), n.model().productName(), row != null && row.cordoned(),
                    row != null ? row.source() : "", conditions.getOrDefault(n.name(), "static"), gv, isolation.get(n.name()),
                    accounts.get(n.name())));
        }
        // an array is one line, where its first queued task is, with its tasks counted per state
        List<JobState> lines = new ArrayList<>();
        for (JobState j : engine.pendingJobs()) {
            counts.computeIfAbsent(j.spec().tenant(), k -> new int[2])[0]++;
            ActiveJob a = active.get(j.id());
            if (a.array != null) {
                int[] c = arrayCounts.computeIfAbsent(a.array.arrayId(), k -> new int[2]);
                if (c[0]++ > 0) continue;
            }
            if (lines.size() < queueLimit) lines.add(j);
        }
        List<PoolSnapshot.QueuedJob> queue = new ArrayList<>();
        for (JobState j : lines) {
            ActiveJob a = active.get(j.id());
            JobRequest r = a.request;
            PoolSnapshot.ArrayLine array = null;
            if (a.array != null) {
                int[] c = arrayCounts.get(a.array.arrayId());
                array = new PoolSnapshot.ArrayLine(a.array.arrayId(), a.array.cap(), c[0], c[1]);
            }
            queue.add(new PoolSnapshot.QueuedJob(array != null ? array.id() : j.id(), j.spec().tenant(), r.name(), r.numGpus(), r.gpuMilli(),
                    r.gpuMemMib(), r.priority(), a.row.submittedMs(), j.waitReason(), array));
        }
        TenantLedger ledger = engine.ledger();
        double totalGpus = engine.cluster().totalMilli() / 1000.0;
        double weightWithWork = 0;
        for (TenantRow t : tenants.values()) if (counts.containsKey(t.name())) weightWithWork += t.weight();
        List<PoolSnapshot.TenantShare> shares = new ArrayList<>();
        for (TenantRow t : tenants.values()) {
            int[] c = counts.getOrDefault(t.name(), new int[2]);
            double held = ledger.account(t.name()).gpus();
            double entitlement = weightWithWork > 0 && counts.containsKey(t.name()) ? t.weight() / weightWithWork : 0;
            shares.add(new PoolSnapshot.TenantShare(t.name(), t.weight(), t.guaranteedGpus(), t.limitGpus(), held,
                    totalGpus > 0 ? held / totalGpus : 0, entitlement, c[0], c[1]));
        }
        double used = engine.cluster().usedMilli() / 1000.0;
        PoolSnapshot.Totals totals = new PoolSnapshot.Totals(engine.cluster().nodeCount(), gpus, used,
                totalGpus > 0 ? used / totalGpus : 0, utilCount > 0 ? utilSum / utilCount : null);
        return new PoolSnapshot(now, settings.policy(), settings.placement(), nodeViews, queue, engine.pendingJobs().size(),
                engine.runningJobs().size(), shares, totals, reservations.stream().map(r -> new Views.Reservation(r.name(), r.tenant(),
                r.startMs(), r.endMs(), r.gpus(), r.model(), r.nodes(), r.gpuList(), r.createdMs(), null)).toList());
    }
}
