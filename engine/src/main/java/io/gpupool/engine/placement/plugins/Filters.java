package io.gpupool.engine.placement.plugins;

import io.gpupool.engine.placement.CycleState;
import io.gpupool.engine.placement.FilterPlugin;
import io.gpupool.engine.placement.ReplicaDemand;
import io.gpupool.engine.state.NodeState;

/** The node filters every placement runs, cheapest first. */
public final class Filters {
    private Filters() {}

    /** The job's allowed GPU models. */
    public static final class ModelFilter implements FilterPlugin {
        @Override public String name() { return "gpu-model"; }

        @Override
        public String filter(CycleState cycle, ReplicaDemand d, NodeState n) {
            return cycle.job().allows(n.model()) ? null : "GPU model not allowed";
        }
    }

    /** Cordoned or drained nodes take no new work. Unhealthy GPUs never count as free. */
    public static final class HealthFilter implements FilterPlugin {
        @Override public String name() { return "health"; }

        @Override
        public String filter(CycleState cycle, ReplicaDemand d, NodeState n) {
            return n.cordoned() ? "node cordoned" : null;
        }
    }

    /** Enough idle GPUs, or one GPU with a large enough free share (memory is checked per GPU). */
    public static final class CapacityFilter implements FilterPlugin {
        @Override public String name() { return "capacity"; }

        @Override
        public String filter(CycleState cycle, ReplicaDemand d, NodeState n) {
            if (d.exclusive()) return n.fullyFreeGpus() >= d.gpus() ? null : "insufficient free GPUs";
            return n.maxShareableMilli() >= d.milli() ? null : "insufficient GPU compute share";
        }
    }

    /** The host's free CPU and memory for the replica's request (jobs that ask for none pass). */
    public static final class HostFilter implements FilterPlugin {
        @Override public String name() { return "host"; }

        @Override
        public String filter(CycleState cycle, ReplicaDemand d, NodeState n) {
            if (!d.host().requested()) return null;
            if (n.freeCpuMilli() < d.host().cpuMilli()) return "insufficient host CPU";
            return n.freeHostMemoryMib() < d.host().memoryMib() ? "insufficient host memory" : null;
        }
    }
}
