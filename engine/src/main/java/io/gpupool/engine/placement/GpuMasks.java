package io.gpupool.engine.placement;

import java.util.Arrays;
import java.util.Set;

/**
 * A placement's excluded GPUs and the only GPUs it may take ({@link CycleState}) as bit masks per node: a placement
 * asks about every GPU of every node it visits, and a set of boxed keys answers each with a hash look-up. Made once
 * per pair of sets and shared by the placements that use them (a round's backfill candidates all place outside the
 * same reservation). GPUs 0-63 are answered from the masks, later ones (nodes of more than 64 GPUs) from the sets.
 */
public final class GpuMasks {
    private final int[] nodes;          // sorted ids of the nodes either set names a GPU 0-63 of
    private final long[] excluded, only;
    private final Set<Long> excludedGpus, onlyGpus;   // the sets, for GPUs past 63 (onlyGpus null: any GPU not excluded)

    private GpuMasks(int[] nodes, long[] excluded, long[] only, Set<Long> excludedGpus, Set<Long> onlyGpus) {
        this.nodes = nodes;
        this.excluded = excluded;
        this.only = only;
        this.excludedGpus = excludedGpus;
        this.onlyGpus = onlyGpus;
    }

    /** The masks of these sets ({@code onlyGpus} null: any GPU not excluded). */
    public static GpuMasks of(Set<Long> excludedGpus, Set<Long> onlyGpus) {
        int[] ids = new int[excludedGpus.size() + (onlyGpus == null ? 0 : onlyGpus.size())];
        int k = 0;
        for (long key : excludedGpus) if (inMask(key)) ids[k++] = CycleState.nodeOfKey(key);
        if (onlyGpus != null) {
            for (long key : onlyGpus) if (inMask(key)) ids[k++] = CycleState.nodeOfKey(key);
        }
        Arrays.sort(ids, 0, k);
        int distinct = 0;
        for (int i = 0; i < k; i++) if (i == 0 || ids[i] != ids[i - 1]) ids[distinct++] = ids[i];
        int[] nodes = Arrays.copyOf(ids, distinct);
        long[] excluded = new long[distinct], only = new long[distinct];
        for (long key : excludedGpus) if (inMask(key)) excluded[Arrays.binarySearch(nodes, CycleState.nodeOfKey(key))] |= 1L << CycleState.gpuOfKey(key);
        if (onlyGpus != null) {
            for (long key : onlyGpus) if (inMask(key)) only[Arrays.binarySearch(nodes, CycleState.nodeOfKey(key))] |= 1L << CycleState.gpuOfKey(key);
        }
        return new GpuMasks(nodes, excluded, only, excludedGpus, onlyGpus);
    }

    private static boolean inMask(long key) {
        return CycleState.gpuOfKey(key) < Long.SIZE;
    }

    /** Whether the placement may not take GPU {@code gpu} of node {@code node}. */
    boolean excluded(int node, int gpu) {
        if (gpu >= Long.SIZE) {
            long key = CycleState.gpuKey(node, gpu);
            return (onlyGpus != null && !onlyGpus.contains(key)) || excludedGpus.contains(key);
        }
        int i = Arrays.binarySearch(nodes, node);
        long bit = 1L << gpu;
        if (onlyGpus != null && (i < 0 || (only[i] & bit) == 0)) return true;
        return i >= 0 && (excluded[i] & bit) != 0;
    }
}
