package io.gpupool.engine.placement;

import io.gpupool.model.GpuModel;
import io.gpupool.model.HostResources;
import io.gpupool.model.JobSpec;

/**
 * What one gang replica needs from one node: {@code gpus} GPUs, each whole (exclusive) or a share of
 * {@code milli} compute and {@code memoryMib} memory (0 = proportional to the compute share), and {@code host}
 * CPU and memory of the node's host ({@link HostResources#NONE}: none asked for). A CPU-only replica has
 * {@code gpus} 0 (and counts as exclusive: it takes no share of any GPU).
 */
public record ReplicaDemand(int gpus, int milli, long memoryMib, boolean exclusive, boolean requireNvlink, HostResources host) {

    /** A demand for GPUs only. */
    public ReplicaDemand(int gpus, int milli, long memoryMib, boolean exclusive, boolean requireNvlink) {
        this(gpus, milli, memoryMib, exclusive, requireNvlink, HostResources.NONE);
    }

    public static ReplicaDemand of(JobSpec job) {
        return new ReplicaDemand(job.shape().gpusPerReplica(), job.share().milli(), job.share().memoryMib(),
                job.share().isWhole(), job.requireNvlink(), job.host());
    }

    /** Memory one GPU grant takes on a GPU of this model with this per-GPU capacity. */
    public long memoryOn(GpuModel model, long capacityMib) {
        if (exclusive) return capacityMib;
        if (memoryMib > 0) return memoryMib;
        return (long) Math.ceil(model.memoryMib() * (milli / 1000.0));
    }

    /** Share size used to look up the fractional index; 0 for whole GPUs. */
    public int shareMilli() {
        return exclusive ? 0 : milli;
    }

    @Override
    public String toString() {
        if (gpus == 0) return "no GPU and " + host;
        return (exclusive ? gpus + " whole GPU" + (gpus > 1 ? "s" : "")
                : "a " + milli + "m share" + (memoryMib > 0 ? " with " + memoryMib + " MiB" : ""))
                + (host.requested() ? " and " + host : "");
    }
}
