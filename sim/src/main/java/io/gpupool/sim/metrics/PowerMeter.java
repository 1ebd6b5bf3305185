package io.gpupool.sim.metrics;

import io.gpupool.engine.state.ClusterState;
import io.gpupool.engine.state.GpuGrant;
import io.gpupool.engine.state.NodeState;
import io.gpupool.model.GpuModel;
import io.gpupool.sim.energy.EnergyModel;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The pool's GPU power over a replay ({@link EnergyModel}) and, with node power-down, its nodes' power states. Like
 * the recorder it keeps a state that is constant between instants and integrates it exactly:
 * <pre>
 *   power = sum over powered-on nodes of their GPUs' idle watts       (changes when a node powers off or on)
 *         + sum over running jobs of their grants' dynamic watts      (changes when a run starts or stops)
 *         + off watts x nodes powered off
 * </pre>
 * Each run is charged {@code grant/1000 x (idle + u x (TDP - idle))} per grant for the time it held them; what the
 * runs are not charged is the pool's idle energy. Nodes are all powered on until a power-down control says otherwise.
 */
public final class PowerMeter {
    private final ClusterState cluster;
    private final EnergyModel model;
    private final double[] nodeIdleWatts;
    private final long[] nodeMilli;
    private final boolean[] asleep;
    private double offWattsPerNode;

    // state between instants
    private double baselineWatts;       // idle watts of the powered-on nodes' GPUs
    private double dynamicWatts;        // what the running jobs add
    private int asleepNodes;
    private long poweredMilli;          // GPU capacity of the powered-on nodes (waking ones included)
    private int busyNodes;
    private int waitingForWake;

    // integrals since the first instant (joules, ms, node-ms, job-ms)
    private double totalJ, jobsJ, asleepNodeMs, poweredNodeMs, poweredMilliMs, busyNodeMs, wakeWaitMs;
    private long wakeups;
    private final Set<String> wokenFor = new HashSet<>();

    /** One run of a job: since when, and what it draws (charged to it) and adds to the pool's draw. */
    private record Run(long startMs, double busyWatts, double dynamicWatts) {}

    private final Map<String, Run> runs = new HashMap<>();

    public PowerMeter(ClusterState cluster, EnergyModel model) {
        this.cluster = cluster;
        this.model = model;
        int n = cluster.nodeCount();
        this.nodeIdleWatts = new double[n];
        this.nodeMilli = new long[n];
        this.asleep = new boolean[n];
        for (int i = 0; i < n; i++) {
            NodeState node = cluster.node(i);
            for (int g = 0; g < node.gpuCount(); g++) nodeIdleWatts[i] += model.idleWatts(gpuModel(node, g));
            nodeMilli[i] = 1000L * node.gpuCount();
            baselineWatts += nodeIdleWatts[i];
            poweredMilli += nodeMilli[i];
        }
    }

    /** The state since the last instant held for {@code dtMs}. */
    void advance(long dtMs) {
        totalJ += (baselineWatts + dynamicWatts + offWattsPerNode * asleepNodes) * dtMs / 1000.0;
        asleepNodeMs += (double) asleepNodes * dtMs;
        poweredNodeMs += (double) (asleep.length - asleepNodes) * dtMs;
        poweredMilliMs += (double) poweredMilli * dtMs;
        busyNodeMs += (double) busyNodes * dtMs;
        wakeWaitMs += (double) waitingForWake * dtMs;
    }

    // ---- runs -----------------------------------------------------------------------------------

    /** A run starts now on these grants (every replica's). */
    void runStarted(String jobId, List<List<GpuGrant>> replicas, long nowMs) {
        double busy = 0, dynamic = 0;
        for (int r = 0; r < replicas.size(); r++) {   // indexed: no iterators at every start
            List<GpuGrant> replica = replicas.get(r);
            for (int i = 0; i < replica.size(); i++) {
                GpuGrant g = replica.get(i);
                GpuModel m = gpuModel(cluster.node(g.node()), g.gpu());
                busy += g.milli() / 1000.0 * model.busyWatts(m);
                dynamic += g.milli() / 1000.0 * model.dynamicWatts(m);
            }
        }
        runs.put(jobId, new Run(nowMs, busy, dynamic));
        dynamicWatts += dynamic;
    }

    /** The job's run stops now; its joules (0 for a job that had no run). */
    double runStopped(String jobId, long nowMs) {
        Run r = runs.remove(jobId);
        if (r == null) return 0;
        dynamicWatts -= r.dynamicWatts();
        if (runs.isEmpty()) dynamicWatts = 0;   // no drift of the sum once nothing runs
        double joules = r.busyWatts() * (nowMs - r.startMs()) / 1000.0;
        jobsJ += joules;
        return joules;
    }

    // ---- node power (a power-down control) ------------------------------------------------------

    /** What a powered-off node draws (watts). */
    public void offWattsPerNode(double watts) {
        this.offWattsPerNode = watts;
    }

    /** The node powers off ({@code true}) or starts waking up ({@code false}: it draws its idle power from now). */
    public void asleep(int node, boolean off) {
        if (asleep[node] == off) return;
        asleep[node] = off;
        asleepNodes += off ? 1 : -1;
        baselineWatts += off ? -nodeIdleWatts[node] : nodeIdleWatts[node];
        poweredMilli += off ? -nodeMilli[node] : nodeMilli[node];
        if (asleepNodes == 0) {
            // back to every node: the sums of the start, without rounding drift
            baselineWatts = 0;
            for (double w : nodeIdleWatts) baselineWatts += w;
            poweredMilli = 0;
            for (long m : nodeMilli) poweredMilli += m;
        }
        if (!off) wakeups++;
    }

    /** Nodes some job uses, from now. */
    public void busyNodes(int n) {
        this.busyNodes = n;
    }

    /** Jobs queued, from now, only because the nodes they need are waking up; their ids are remembered. */
    public void waitingForWake(Set<String> jobIds) {
        this.waitingForWake = jobIds.size();
        wokenFor.addAll(jobIds);
    }

    // ---- results --------------------------------------------------------------------------------

    /** The figures so far (the recorder takes them at the last completion: the makespan's end). */
    Snapshot snapshot() {
        return new Snapshot(totalJ, jobsJ, asleepNodeMs, poweredNodeMs, poweredMilliMs, busyNodeMs, wakeWaitMs, wakeups, wokenFor.size());
    }

    /** Integrals up to one instant: joules, node-ms, GPU-thousandth-ms, job-ms; wake-ups and jobs that waited for one. */
    record Snapshot(double totalJ, double jobsJ, double asleepNodeMs, double poweredNodeMs, double poweredMilliMs, double busyNodeMs,
                    double wakeWaitMs, long wakeups, long jobsWaitedForWake) {
        static final Snapshot ZERO = new Snapshot(0, 0, 0, 0, 0, 0, 0, 0, 0);
    }

    private static GpuModel gpuModel(NodeState node, int gpu) {
        return node.spec().gpus().get(gpu).model();
    }
}
