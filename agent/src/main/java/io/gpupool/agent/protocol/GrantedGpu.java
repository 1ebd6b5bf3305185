package io.gpupool.agent.protocol;

import io.gpupool.model.GpuShare;
import io.gpupool.model.SpecException;

/**
 * A share of one of this node's GPUs that the server granted a job, as a launch carries it: a {@link Grant} addressed
 * by UUID alone, with memory 0 for a whole GPU.
 *
 * @param uuid      the GPU
 * @param milli     compute share in thousandths (1000 = all of it)
 * @param memoryMib memory granted in MiB; 0 together with milli 1000 means the whole, exclusive GPU
 */
public record GrantedGpu(String uuid, int milli, long memoryMib) {
    public GrantedGpu {
        if (uuid == null || uuid.isBlank()) throw new SpecException("grant", "uuid", "must not be empty");
        GpuShare.requireMilli("grant " + uuid, "milli", milli);
        if (memoryMib < 0) throw new SpecException("grant " + uuid, "memory_mib", "must be >= 0, got " + memoryMib);
    }

    /** The agent's form of a grant on its node: the whole GPU when exclusive, else the share with its memory. */
    public static GrantedGpu of(Grant g) {
        return g.exclusive() ? whole(g.uuid()) : new GrantedGpu(g.uuid(), g.milli(), g.memoryMib());
    }

    public static GrantedGpu whole(String uuid) {
        return new GrantedGpu(uuid, GpuShare.WHOLE, 0);
    }

    /** A whole GPU is exclusive: no other job may hold any part of it. */
    public boolean whole() {
        return milli == GpuShare.WHOLE && memoryMib == 0;
    }

    /** The memory this grant allows on a GPU of {@code totalMib}: the explicit figure, else the compute share of it. */
    public long memoryOn(long totalMib) {
        if (memoryMib > 0) return memoryMib;
        return (long) Math.floor(totalMib * (milli / (double) GpuShare.WHOLE));
    }
}
