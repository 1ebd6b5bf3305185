package io.gpupool.engine;

import io.gpupool.engine.placement.CycleState;
import io.gpupool.engine.state.ClusterState;
import io.gpupool.engine.state.GpuGrant;
import io.gpupool.engine.state.NodeState;

import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** The engine's invariant, checked from scratch: what the running jobs hold is exactly what the cluster state says is used. */
final class ConsistencyCheck {
    private ConsistencyCheck() {}

    /**
     * Recomputes every GPU's use from the running jobs' allocations and checks it against the cluster
     * state and the sharing rules. Throws on any mismatch; tests call it after every step.
     */
    static void check(ClusterState cluster, Collection<JobState> running) {
        Map<Long, long[]> use = new HashMap<>();
        long[][] hostUse = new long[cluster.nodeCount()][2];
        for (JobState j : running) {
            if (j.allocation == null) throw new IllegalStateException("running job without allocation: " + j.id());
            if (j.allocation.replicas().size() != j.spec().shape().replicas()) throw new IllegalStateException("gang not whole: " + j.id());
            if (!j.allocation.hostPerReplica().equals(j.spec().host())) throw new IllegalStateException("host resources not as asked: " + j.id());
            for (int r = 0; r < j.allocation.replicas().size(); r++) {
                List<GpuGrant> rep = j.allocation.replicas().get(r);
                int node = j.allocation.nodeOf(r);
                hostUse[node][0] += j.spec().host().cpuMilli();
                hostUse[node][1] += j.spec().host().memoryMib();
                if (rep.size() != j.spec().shape().gpusPerReplica()) throw new IllegalStateException("replica size wrong: " + j.id());
                for (GpuGrant g : rep) {
                    if (g.node() != node) throw new IllegalStateException("replica spans nodes: " + j.id());
                    long[] u = use.computeIfAbsent(CycleState.gpuKey(g.node(), g.gpu()), k -> new long[4]);
                    u[0] += g.milli();
                    u[1] += g.memoryMib();
                    u[2]++;
                    if (g.exclusive()) u[3]++;
                }
            }
        }
        for (NodeState n : cluster.nodes()) {
            long[] h = hostUse[n.id()];
            if (h[0] > n.spec().cpuMilli() || h[1] > n.spec().memoryMib()) throw new IllegalStateException(n.name() + " host CPU or memory over capacity");
            if (n.freeCpuMilli() != n.spec().cpuMilli() - h[0] || n.freeHostMemoryMib() != n.spec().memoryMib() - h[1]) {
                throw new IllegalStateException(n.name() + " host state does not match allocations");
            }
            for (int g = 0; g < n.gpuCount(); g++) {
                long[] u = use.getOrDefault(CycleState.gpuKey(n.id(), g), new long[4]);
                if (u[0] > 1000) throw new IllegalStateException(n.name() + "/" + g + " compute over capacity: " + u[0]);
                if (u[1] > n.memoryCapacityMib()) throw new IllegalStateException(n.name() + "/" + g + " memory over capacity: " + u[1]);
                if (u[2] > n.spec().splitCount()) throw new IllegalStateException(n.name() + "/" + g + " more tasks than split count");
                if (u[3] > 0 && u[2] > 1) throw new IllegalStateException(n.name() + "/" + g + " exclusive GPU shared");
                if (n.freeMilli(g) != 1000 - u[0] || n.freeMemoryMib(g) != n.memoryCapacityMib() - u[1] || n.tasks(g) != u[2]) {
                    throw new IllegalStateException(n.name() + "/" + g + " state does not match allocations");
                }
            }
        }
    }
}
