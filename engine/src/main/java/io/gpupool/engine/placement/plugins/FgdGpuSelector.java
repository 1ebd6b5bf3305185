package io.gpupool.engine.placement.plugins;

import io.gpupool.engine.placement.CycleState;
import io.gpupool.engine.placement.GpuSelector;
import io.gpupool.engine.placement.ReplicaDemand;
import io.gpupool.engine.state.NodeState;

/** A share goes to the GPU where the node's fragmentation grows least (FGD at GPU level). */
public final class FgdGpuSelector implements GpuSelector {
    @Override public String name() { return "fgd"; }

    @Override public boolean readsWorkloadProfile() { return true; }

    @Override
    public int[] select(CycleState cycle, ReplicaDemand d, NodeState n) {
        if (d.exclusive()) return WholeGpuChooser.choose(cycle, d, n);
        NodeFragmentation frag = null;
        int best = -1;
        double bestFrag = Double.MAX_VALUE;
        int[] one = new int[1];
        for (int g = 0; g < n.gpuCount(); g++) {
            if (!WholeGpuChooser.shareFits(cycle, d, n, g)) continue;
            if (frag == null) frag = new NodeFragmentation(n, Fragmentation.shapes(cycle.profile(), d));
            one[0] = g;
            double f = frag.after(d, one);
            if (f < bestFrag - 1e-9 || (Math.abs(f - bestFrag) <= 1e-9 && n.freeMilli(g) < n.freeMilli(best))) {
                best = g;
                bestFrag = f;
            }
        }
        return best < 0 ? null : new int[] {best};
    }
}
