package io.gpupool.engine.placement.plugins;

import io.gpupool.engine.placement.ReplicaDemand;
import io.gpupool.engine.placement.WorkloadProfile;
import io.gpupool.engine.state.NodeState;

import java.util.List;

/**
 * Fragmentation of a node against a workload, as defined by Weng et al., "Beware of Fragmentation"
 * (USENIX ATC'23): for each task shape, the free GPU compute that a task of that shape could not use,
 * weighted by how common the shape is. A placement that raises it least is the FGD choice.
 */
public final class Fragmentation {
    private Fragmentation() {}

    /** Fragmentation in thousandths of a GPU, with an optional tentative grant applied to {@code gpus}. */
    public static double of(NodeState n, List<WorkloadProfile.Shape> shapes, ReplicaDemand grant, int[] gpus) {
        int count = n.gpuCount();
        int[] free = new int[count];
        boolean[] idle = new boolean[count];
        for (int g = 0; g < count; g++) {
            boolean usable = n.healthy(g) && (n.tasks(g) == 0 || n.canShare(g));
            free[g] = usable ? n.freeMilli(g) : 0;
            idle[g] = n.isFullyFree(g);
        }
        if (grant != null) {
            for (int g : gpus) {
                free[g] -= grant.exclusive() ? free[g] : grant.milli();
                idle[g] = false;
                if (grant.exclusive() || n.tasks(g) + 1 >= n.spec().splitCount()) free[g] = 0;
            }
        }
        double total = 0;
        int all = -1;
        for (WorkloadProfile.Shape s : shapes) {
            if (s.allows(n.model().id())) {
                total += s.weight() * forShape(free, idle, s.gpus(), s.milli());
            } else {
                // a task that may not run on this model can use none of it
                if (all < 0) { all = 0; for (int f : free) all += f; }
                total += s.weight() * all;
            }
        }
        return total;
    }

    static int forShape(int[] free, boolean[] idle, int gpus, int milli) {
        int frag = 0;
        if (milli < 1000) {
            for (int f : free) if (f < milli) frag += f;
            return frag;
        }
        int idleCount = 0;
        for (boolean b : idle) if (b) idleCount++;
        for (int g = 0; g < free.length; g++) {
            if (idleCount < gpus || !idle[g]) frag += free[g];
        }
        return frag;
    }

    /** The shapes to measure against: the learned profile, or the request itself before anything was seen. */
    static List<WorkloadProfile.Shape> shapes(WorkloadProfile profile, ReplicaDemand d) {
        if (profile != null && profile.observed() > 0) return profile.shapes();
        return List.of(new WorkloadProfile.Shape(d.gpus(), d.exclusive() ? 1000 : d.milli(), 1.0));
    }
}
