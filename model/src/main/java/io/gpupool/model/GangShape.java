package io.gpupool.model;

/**
 * How a multi-GPU job is laid out: {@code replicas} groups of {@code gpusPerReplica} GPUs. Each replica
 * lives on one node (and, where the node has one big enough, inside one NVLink domain); replicas may
 * span nodes. The whole gang starts together or not at all. {@code gpusPerReplica} 0 is a CPU-only job
 * (it asks only for host CPU and memory; {@link JobSpec} insists that it asks for some).
 */
public record GangShape(int replicas, int gpusPerReplica) {
    /** GPUs per replica chosen for a job that gives only a GPU count: the largest divisor of n that is <= this. */
    public static final int DEFAULT_MAX_GPUS_PER_REPLICA = 8;

    public GangShape {
        if (replicas < 1) throw new SpecException(null, "replicas", "must be >= 1, got " + replicas);
        if (gpusPerReplica < 0) throw new SpecException(null, "gpus_per_replica", "must be >= 0, got " + gpusPerReplica);
    }

    public int totalGpus() {
        return replicas * gpusPerReplica;
    }

    /**
     * The shape of a job that asks only for {@code numGpus}: one replica up to {@code maxPerReplica} GPUs,
     * otherwise the largest divisor of {@code numGpus} that fits one node as the replica size
     * (16 -> 2x8, 12 -> 2x6, 17 -> 17x1).
     */
    public static GangShape forGpuCount(int numGpus, int maxPerReplica) {
        if (numGpus < 1) throw new SpecException(null, "num_gpus", "must be >= 1, got " + numGpus);
        int max = Math.max(1, maxPerReplica);
        if (numGpus <= max) return new GangShape(1, numGpus);
        for (int k = max; k >= 1; k--) {
            if (numGpus % k == 0) return new GangShape(numGpus / k, k);
        }
        return new GangShape(numGpus, 1);
    }

    @Override
    public String toString() {
        return replicas + "x" + gpusPerReplica;
    }
}
