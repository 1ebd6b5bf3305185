package io.gpupool.engine.placement;

import io.gpupool.engine.state.ClusterState;
import io.gpupool.model.JobSpec;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Scratch state of one placement attempt (kube-scheduler's CycleState): the job, GPUs that must not be
 * used (another job's reservation), and the nodes earlier replicas of the same gang went to.
 */
public final class CycleState {
    private final ClusterState cluster;
    private final JobSpec job;
    private final WorkloadProfile profile;
    private final Set<Long> excludedGpus;
    private final Set<Long> onlyGpus;   // null: any GPU not excluded
    final List<Integer> gangNodes = new ArrayList<>();
    private int[] counts = new int[0];   // scratch of a GPU policy, reused over the nodes one placement visits
    private final boolean anyLimit;      // some GPU is excluded, or only some are allowed
    private GpuMasks masks;              // the two sets as masks: given, or made at the first question

    public CycleState(ClusterState cluster, JobSpec job, WorkloadProfile profile, Set<Long> excludedGpus) {
        this(cluster, job, profile, excludedGpus, null);
    }

    /**
     * @param onlyGpus the only GPUs the job may take (a job that runs in an advance reservation), null for any not
     *                 in {@code excludedGpus}
     */
    public CycleState(ClusterState cluster, JobSpec job, WorkloadProfile profile, Set<Long> excludedGpus, Set<Long> onlyGpus) {
        this(cluster, job, profile, excludedGpus, onlyGpus, null);
    }

    /** The same with the sets' masks made already ({@link GpuMasks#of} of these two sets; null: made when asked). */
    public CycleState(ClusterState cluster, JobSpec job, WorkloadProfile profile, Set<Long> excludedGpus, Set<Long> onlyGpus,
                      GpuMasks masks) {
        this.masks = masks;
        this.cluster = cluster;
        this.job = job;
        this.profile = profile;
        this.excludedGpus = excludedGpus == null ? Set.of() : excludedGpus;
        this.onlyGpus = onlyGpus;
        this.anyLimit = !this.excludedGpus.isEmpty() || onlyGpus != null;
    }

    /** One GPU of the pool as a number: its node above its index on the node (a node has fewer than 256 GPUs). */
    public static long gpuKey(int node, int gpu) {
        return ((long) node << 8) | gpu;
    }

    /** The node of a {@link #gpuKey}. */
    public static int nodeOfKey(long key) {
        return (int) (key >>> 8);
    }

    /** The GPU's index on its node, of a {@link #gpuKey}. */
    public static int gpuOfKey(long key) {
        return (int) (key & 0xFF);
    }

    public ClusterState cluster() { return cluster; }
    public JobSpec job() { return job; }
    public WorkloadProfile profile() { return profile; }
    public boolean excluded(int node, int gpu) {
        if (!anyLimit) return false;
        if (masks == null) masks = GpuMasks.of(excludedGpus, onlyGpus);
        return masks.excluded(node, gpu);
    }
    public boolean hasExclusions() { return anyLimit; }
    /** Nodes already holding a replica of this gang, in placement order. */
    public List<Integer> gangNodes() { return gangNodes; }

    public static Set<Long> newGpuSet() { return new HashSet<>(); }

    /**
     * Zeroed counts, at least {@code size} long, for a GPU policy's work on one node: the same buffer for every node a
     * placement visits (a GPU policy is done with it when it returns), so a visit allocates none.
     */
    public int[] scratchCounts(int size) {
        if (counts.length < size) return counts = new int[Math.max(size, 2 * counts.length)];
        Arrays.fill(counts, 0, size, 0);
        return counts;
    }
}
