package io.gpupool.engine.placement.plugins;

import io.gpupool.engine.placement.CycleState;
import io.gpupool.engine.placement.ReplicaDemand;
import io.gpupool.engine.state.NodeState;

/**
 * Picks k idle GPUs of a node for a whole-GPU replica, topology first: the smallest NVLink domain that
 * still holds all k (so big domains stay whole for big replicas), otherwise the fewest domains.
 */
final class WholeGpuChooser {
    private WholeGpuChooser() {}

    static int[] choose(CycleState cycle, ReplicaDemand d, NodeState n) {
        int k = d.gpus();
        if (k == 0) return new int[0];   // a CPU-only replica takes no GPU
        if (n.fullyFreeGpus() < k) return null;
        int count = n.gpuCount();
        int domains = n.domainCount();
        // free GPUs per NVLink domain; GPUs without NVLink are singleton groups (slot domains + g)
        int groups = domains + count;
        int[] freeIn = cycle.scratchCounts(groups);
        int total = 0;
        for (int g = 0; g < count; g++) {
            if (!n.isFullyFree(g) || cycle.excluded(n.id(), g)) continue;
            freeIn[group(n, g, domains)]++;
            total++;
        }
        if (total < k) return null;
        int best = -1;
        for (int grp = 0; grp < groups; grp++) {
            if (freeIn[grp] >= k && (best < 0 || freeIn[grp] < freeIn[best])) best = grp;
        }
        int[] out = new int[k];
        int taken = 0;
        if (best >= 0) {
            for (int g = 0; g < count && taken < k; g++) {
                if (n.isFullyFree(g) && !cycle.excluded(n.id(), g) && group(n, g, domains) == best) out[taken++] = g;
            }
            return out;
        }
        if (d.requireNvlink() && k > 1) return null;
        // span as few groups as possible: largest groups first
        boolean[] used = new boolean[groups];
        while (taken < k) {
            int grp = -1;
            for (int i = 0; i < groups; i++) if (!used[i] && freeIn[i] > 0 && (grp < 0 || freeIn[i] > freeIn[grp])) grp = i;
            used[grp] = true;
            for (int g = 0; g < count && taken < k; g++) {
                if (n.isFullyFree(g) && !cycle.excluded(n.id(), g) && group(n, g, domains) == grp) out[taken++] = g;
            }
        }
        java.util.Arrays.sort(out);
        return out;
    }

    static int group(NodeState n, int g, int domains) {
        int dom = n.domainOf(g);
        return dom >= 0 ? dom : domains + g;
    }

    /** Whether GPU g can take this fractional share (compute, memory, split count, not reserved). */
    static boolean shareFits(CycleState cycle, ReplicaDemand d, NodeState n, int g) {
        return n.canShare(g) && n.freeMilli(g) >= d.milli()
                && n.freeMemoryMib(g) >= d.memoryOn(n.model(), n.memoryCapacityMib())
                && !cycle.excluded(n.id(), g);
    }
}
