package io.gpupool.engine.placement.plugins;

import io.gpupool.engine.placement.CycleState;
import io.gpupool.engine.placement.ReplicaDemand;
import io.gpupool.engine.state.NodeState;
import io.gpupool.engine.status.Resource;
import io.gpupool.engine.status.Status;

/**
 * Whether a replica may take exactly the given GPUs of a node: the rule every {@code GpuSelector} honours,
 * stated once for GPU sets chosen elsewhere (a batch optimizer's answer). Node-level filters are the
 * pipeline's; this checks the GPUs themselves.
 */
public final class GivenGpus {
    private GivenGpus() {}

    /**
     * Null when the replica may take these GPUs of this node, else why not: an {@code ERROR} when the GPUs do not
     * fit the replica's shape or the node, {@code UNSCHEDULABLE} when they are not free enough now.
     */
    public static Status check(CycleState cycle, ReplicaDemand d, NodeState n, int[] gpus) {
        if (gpus.length != d.gpus()) return Status.error(Status.GPU_POLICY, "takes " + gpus.length + " GPUs, the replica needs " + d.gpus());
        int domain = Integer.MIN_VALUE;
        for (int i = 0; i < gpus.length; i++) {
            int g = gpus[i];
            if (g < 0 || g >= n.gpuCount()) return Status.error(Status.GPU_POLICY, "has no GPU " + g);
            for (int j = 0; j < i; j++) if (gpus[j] == g) return Status.error(Status.GPU_POLICY, "GPU " + g + " given twice");
            if (d.exclusive()) {
                if (!n.isFullyFree(g) || cycle.excluded(n.id(), g)) return Status.unschedulable(Status.GPU_POLICY, Resource.GPUS, "GPU " + g + " is not free");
                int grp = WholeGpuChooser.group(n, g, n.domainCount());
                if (d.requireNvlink() && gpus.length > 1 && domain != Integer.MIN_VALUE && grp != domain) {
                    return Status.unschedulable(Status.GPU_POLICY, Resource.NVLINK, "GPUs " + java.util.Arrays.toString(gpus) + " are not in one NVLink domain");
                }
                domain = grp;
            } else if (!WholeGpuChooser.shareFits(cycle, d, n, g)) {
                Resource lacking = n.freeMilli(g) < d.milli() ? Resource.GPU_COMPUTE
                        : n.freeMemoryMib(g) < d.memoryOn(n.model(), n.memoryCapacityMib()) ? Resource.GPU_MEMORY : Resource.NONE;
                return Status.unschedulable(Status.GPU_POLICY, lacking, "GPU " + g + " cannot take " + d);
            }
        }
        return null;
    }
}
