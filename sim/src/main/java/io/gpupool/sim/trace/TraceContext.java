package io.gpupool.sim.trace;

import io.gpupool.model.GangShape;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.GpuMemorySizer;

/**
 * What a format needs besides the file: the catalog that resolves GPU model names and aliases, the
 * largest replica the pool's nodes hold (a 16-GPU job on 8-GPU nodes becomes 2 replicas of 8), and the sizer that
 * fills a job's GPU memory from its model size (null: a row that needs it is an error).
 */
public record TraceContext(GpuCatalog catalog, int maxGpusPerReplica, GpuMemorySizer sizer) {
    public TraceContext {
        if (maxGpusPerReplica < 1) maxGpusPerReplica = GangShape.DEFAULT_MAX_GPUS_PER_REPLICA;
    }

    public TraceContext(GpuCatalog catalog, int maxGpusPerReplica) {
        this(catalog, maxGpusPerReplica, null);
    }

    public TraceContext withSizer(GpuMemorySizer s) {
        return new TraceContext(catalog, maxGpusPerReplica, s);
    }

    public static TraceContext standard() {
        return new TraceContext(GpuCatalog.standard(), GangShape.DEFAULT_MAX_GPUS_PER_REPLICA);
    }

    /** The shape of a job that gives only a GPU count. */
    public GangShape shapeFor(int gpus) {
        return GangShape.forGpuCount(gpus, maxGpusPerReplica);
    }
}
