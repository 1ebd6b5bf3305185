package io.gpupool.model;

/**
 * What a job asks of each GPU it gets. Its two rules ({@link #requireMilli}, {@link #requireOneGpuIfShared}) are the
 * only definitions of them: every reader of a share (API, trace files, pods, grants) calls them with its own names
 * for the fields.
 *
 * @param milli     compute share in thousandths of one GPU (1..1000); 1000 is a whole, exclusive GPU
 * @param memoryMib GPU memory in MiB; 0 means "the share of memory that matches the compute share"
 *                  (all of it for a whole GPU)
 */
public record GpuShare(int milli, long memoryMib) {
    public static final int WHOLE = 1000;
    public static final GpuShare WHOLE_GPU = new GpuShare(WHOLE, 0);

    public GpuShare {
        requireMilli(null, "gpu_milli", milli);
        if (memoryMib < 0) throw new SpecException(null, "gpu_mem_mib", "must be >= 0, got " + memoryMib);
    }

    /**
     * The compute rule: a share is 1..1000 thousandths of one GPU.
     *
     * @param field the caller's name for the compute share, e.g. {@code gpuMilli}, {@code gpu_milli}
     * @return {@code milli}, as an int
     * @throws SpecException naming {@code where} and {@code field}
     */
    public static int requireMilli(String where, String field, long milli) {
        if (milli < 1 || milli > WHOLE) throw new SpecException(where, field, "must be in 1.." + WHOLE + ", got " + milli);
        return (int) milli;
    }

    /**
     * The fraction rule: a share of a GPU (less than all its compute, or a memory cap) is for a job of one GPU; a job
     * of several GPUs takes them whole.
     *
     * @param milliField  the caller's name for the compute share, named when it is below 1000
     * @param memoryField the caller's name for the memory cap, named otherwise
     * @param gpus        the GPUs the job asks for in all
     * @throws SpecException naming {@code where} and the field that makes the share a fraction
     */
    public static void requireOneGpuIfShared(String where, String milliField, String memoryField, int milli, long memoryMib, long gpus) {
        if (isWhole(milli, memoryMib) || gpus <= 1) return;
        throw new SpecException(where, milli < WHOLE ? milliField : memoryField, "a share of a GPU (" + milli + " milli"
                + (memoryMib > 0 ? ", " + memoryMib + " MiB" : "") + ") is for a job of 1 GPU; a job of " + gpus + " GPUs takes them whole");
    }

    private static boolean isWhole(int milli, long memoryMib) {
        return milli == WHOLE && memoryMib == 0;
    }

    /** From a HAMi-style compute percentage (gpucores 1..100). */
    public static GpuShare ofPercent(int percent, long memoryMib) {
        if (percent < 1 || percent > 100) throw new SpecException(null, "gpu_percent", "must be in 1..100, got " + percent);
        return new GpuShare(percent * 10, memoryMib);
    }

    /** A whole GPU is exclusive; anything less (in compute, or with an explicit memory cap) shares. */
    public boolean isWhole() {
        return isWhole(milli, memoryMib);
    }

    /** Memory this share takes on a GPU of the given model. */
    public long memoryOn(GpuModel model) {
        if (memoryMib > 0) return memoryMib;
        return (long) Math.ceil(model.memoryMib() * (milli / (double) WHOLE));
    }
}
