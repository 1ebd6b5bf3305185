package io.gpupool.optimize;

import io.gpupool.engine.state.Allocation;
import io.gpupool.engine.state.ClusterState;
import io.gpupool.engine.state.GpuGrant;
import io.gpupool.engine.placement.CycleState;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * The objective of a placement, compared lexicographically: first {@code value} (priority-weighted GPU
 * demand placed, thousandths of a GPU; higher is better), then {@link #penalty()} (lower is better):
 * {@code openedGpus}, idle GPUs that fractional shares start to use (packing shares onto GPUs already
 * shared keeps whole GPUs free, the fragmentation this measures), plus {@code gangSpread}, the nodes a
 * gang uses beyond one (summed over gangs).
 */
public record Score(long value, int openedGpus, int gangSpread) implements Comparable<Score> {
    public static final Score EMPTY = new Score(0, 0, 0);

    public int penalty() {
        return openedGpus + gangSpread;
    }

    /** Greater is better. */
    @Override
    public int compareTo(Score o) {
        int c = Long.compare(value, o.value);
        return c != 0 ? c : Integer.compare(o.penalty(), penalty());
    }

    public boolean betterThan(Score o) {
        return compareTo(o) > 0;
    }

    /** Weighted GPUs placed (value / 1000), as reports show it. */
    public double valueGpus() {
        return value / 1000.0;
    }

    /** The score of these allocations on the problem's cluster as it is (before they are applied). */
    public static Score of(BatchProblem p, Map<String, Allocation> placement) {
        ClusterState cluster = p.cluster();
        return of(p, placement, (node, gpu) -> cluster.node(node).isFullyFree(gpu));
    }

    /**
     * As {@link #of(BatchProblem, Map)}, with the GPUs that were idle before the placement given apart (for a
     * caller that holds the cluster changed meanwhile).
     */
    static Score of(BatchProblem p, Map<String, Allocation> placement, IdleBefore idleBefore) {
        long value = 0;
        int spread = 0;
        Set<Long> opened = new HashSet<>();
        for (Allocation a : placement.values()) {
            int j = p.indexOf(a.jobId());
            value += p.value(j);
            if (a.replicas().size() > 1) spread += a.nodesUsed() - 1;
            for (GpuGrant g : a.grants()) {
                if (!g.exclusive() && idleBefore.idle(g.node(), g.gpu())) opened.add(CycleState.gpuKey(g.node(), g.gpu()));
            }
        }
        return new Score(value, opened.size(), spread);
    }

    /** Whether a GPU was idle (fully free) before the placement being scored. */
    @FunctionalInterface
    interface IdleBefore {
        boolean idle(int node, int gpu);
    }
}
