package io.gpupool.engine.placement.plugins;

import io.gpupool.engine.placement.CycleState;
import io.gpupool.engine.placement.FilterPlugin;
import io.gpupool.engine.placement.ReplicaDemand;
import io.gpupool.engine.state.NodeState;
import io.gpupool.engine.status.Resource;
import io.gpupool.engine.status.Status;
import io.gpupool.model.GpuShare;

/** The node filters every placement runs, cheapest first. */
public final class Filters {
    private Filters() {}

    /** The job's allowed GPU models: a node of another model never takes the job. */
    public static final class ModelFilter implements FilterPlugin {
        public static final String NAME = "gpu-model";
        private static final Status NOT_ALLOWED = Status.unresolvable(NAME, Resource.GPU_MODEL, "GPU model not allowed");

        @Override public String name() { return NAME; }

        @Override
        public Status filter(CycleState cycle, ReplicaDemand d, NodeState n) {
            return cycle.job().allows(n.model()) ? null : NOT_ALLOWED;
        }
    }

    /** Cordoned or drained nodes take no new work. Unhealthy GPUs never count as free. */
    public static final class HealthFilter implements FilterPlugin {
        public static final String NAME = "health";
        private static final Status CORDONED = Status.unschedulable(NAME, Resource.NONE, "node cordoned");

        @Override public String name() { return NAME; }

        @Override
        public Status filter(CycleState cycle, ReplicaDemand d, NodeState n) {
            return n.cordoned() ? CORDONED : null;
        }
    }

    /** Enough idle GPUs, or one GPU with a large enough free share (memory is checked per GPU). */
    public static final class CapacityFilter implements FilterPlugin {
        public static final String NAME = "capacity";

        @Override public String name() { return NAME; }

        @Override
        public Status filter(CycleState cycle, ReplicaDemand d, NodeState n) {
            if (d.exclusive()) {
                return n.fullyFreeGpus() >= d.gpus() ? null
                        : Status.insufficient(NAME, Resource.GPUS, d.gpus(), n.fullyFreeGpus(), n.gpuCount(), "insufficient free GPUs");
            }
            return n.maxShareableMilli() >= d.milli() ? null
                    : Status.insufficient(NAME, Resource.GPU_COMPUTE, d.milli(), Math.max(0, n.maxShareableMilli()), GpuShare.WHOLE,
                    "insufficient GPU compute share");
        }
    }

    /** The host's free CPU and memory for the replica's request (jobs that ask for none pass). */
    public static final class HostFilter implements FilterPlugin {
        public static final String NAME = "host";

        @Override public String name() { return NAME; }

        @Override
        public Status filter(CycleState cycle, ReplicaDemand d, NodeState n) {
            if (!d.host().requested()) return null;
            if (n.freeCpuMilli() < d.host().cpuMilli()) {
                return Status.insufficient(NAME, Resource.HOST_CPU, d.host().cpuMilli(), n.freeCpuMilli(), n.spec().cpuMilli(), "insufficient host CPU");
            }
            return n.freeHostMemoryMib() < d.host().memoryMib()
                    ? Status.insufficient(NAME, Resource.HOST_MEMORY, d.host().memoryMib(), n.freeHostMemoryMib(), n.spec().memoryMib(), "insufficient host memory")
                    : null;
        }
    }
}
