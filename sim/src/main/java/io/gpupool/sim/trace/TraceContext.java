package io.gpupool.sim.trace;

import io.gpupool.model.ClusterSpec;
import io.gpupool.model.GangShape;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.GpuMemorySizer;

/**
 * What a format needs besides the file: the catalog that resolves GPU model names and aliases, the
 * largest replica the pool's nodes hold (a 16-GPU job on 8-GPU nodes becomes 2 replicas of 8), the sizer that
 * fills a job's GPU memory from its model size (null: a row that needs it is an error), and whether the
 * pool's nodes declare host CPU and memory ({@code hostResources}): only then do formats that carry them
 * (openb) give jobs host requests; on a pool without host figures they would fit nowhere.
 */
public record TraceContext(GpuCatalog catalog, int maxGpusPerReplica, GpuMemorySizer sizer, boolean hostResources) {
    public TraceContext {
        if (maxGpusPerReplica < 1) maxGpusPerReplica = GangShape.DEFAULT_MAX_GPUS_PER_REPLICA;
    }

    /** A context whose jobs ask for no host resources. */
    public TraceContext(GpuCatalog catalog, int maxGpusPerReplica, GpuMemorySizer sizer) {
        this(catalog, maxGpusPerReplica, sizer, false);
    }

    public TraceContext(GpuCatalog catalog, int maxGpusPerReplica) {
        this(catalog, maxGpusPerReplica, null);
    }

    /** The context for replaying on this pool: its largest node and whether every node declares host CPU and memory. */
    public static TraceContext forPool(GpuCatalog catalog, ClusterSpec pool) {
        boolean host = !pool.nodes().isEmpty() && pool.nodes().stream().allMatch(n -> n.cpuMilli() > 0 && n.memoryMib() > 0);
        return new TraceContext(catalog, Math.max(1, pool.maxGpusPerNode()), null, host);
    }

    public TraceContext withSizer(GpuMemorySizer s) {
        return new TraceContext(catalog, maxGpusPerReplica, s, hostResources);
    }

    /** The same context with jobs reading no host requests (GPUs alone decide placement). */
    public TraceContext withoutHost() {
        return new TraceContext(catalog, maxGpusPerReplica, sizer, false);
    }

    public static TraceContext standard() {
        return new TraceContext(GpuCatalog.standard(), GangShape.DEFAULT_MAX_GPUS_PER_REPLICA);
    }

    /** The shape of a job that gives only a GPU count. */
    public GangShape shapeFor(int gpus) {
        return GangShape.forGpuCount(gpus, maxGpusPerReplica);
    }
}
