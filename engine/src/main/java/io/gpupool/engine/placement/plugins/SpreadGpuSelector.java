package io.gpupool.engine.placement.plugins;

import io.gpupool.engine.placement.CycleState;
import io.gpupool.engine.placement.GpuSelector;
import io.gpupool.engine.placement.ReplicaDemand;
import io.gpupool.engine.state.NodeState;

/** A share goes to the emptiest GPU, so co-located tasks interfere least. */
public final class SpreadGpuSelector implements GpuSelector {
    @Override public String name() { return "spread"; }

    @Override
    public int[] select(CycleState cycle, ReplicaDemand d, NodeState n) {
        if (d.exclusive()) return WholeGpuChooser.choose(cycle, d, n);
        int best = -1;
        for (int g = 0; g < n.gpuCount(); g++) {
            if (WholeGpuChooser.shareFits(cycle, d, n, g) && (best < 0 || n.freeMilli(g) > n.freeMilli(best))) best = g;
        }
        return best < 0 ? null : new int[] {best};
    }
}
