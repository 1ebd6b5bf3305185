package io.gpupool.model;

/**
 * What a job asks of each GPU it gets.
 *
 * @param milli     compute share in thousandths of one GPU (1..1000); 1000 is a whole, exclusive GPU
 * @param memoryMib GPU memory in MiB; 0 means "the share of memory that matches the compute share"
 *                  (all of it for a whole GPU)
 */
public record GpuShare(int milli, long memoryMib) {
    public static final int WHOLE = 1000;
    public static final GpuShare WHOLE_GPU = new GpuShare(WHOLE, 0);

    public GpuShare {
        if (milli < 1 || milli > WHOLE) throw new SpecException(null, "gpu_milli", "must be in 1..1000, got " + milli);
        if (memoryMib < 0) throw new SpecException(null, "gpu_mem_mib", "must be >= 0, got " + memoryMib);
    }

    /** From a HAMi-style compute percentage (gpucores 1..100). */
    public static GpuShare ofPercent(int percent, long memoryMib) {
        if (percent < 1 || percent > 100) throw new SpecException(null, "gpu_percent", "must be in 1..100, got " + percent);
        return new GpuShare(percent * 10, memoryMib);
    }

    /** A whole GPU is exclusive; anything less (in compute, or with an explicit memory cap) shares. */
    public boolean isWhole() {
        return milli == WHOLE && memoryMib == 0;
    }

    /** Memory this share takes on a GPU of the given model. */
    public long memoryOn(GpuModel model) {
        if (memoryMib > 0) return memoryMib;
        return (long) Math.ceil(model.memoryMib() * (milli / (double) WHOLE));
    }
}
