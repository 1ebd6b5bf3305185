package io.gpupool.engine.placement;

import java.util.Arrays;
import java.util.Set;

/**
 * A placement's excluded GPUs and the only GPUs it may take ({@link CycleState}) as bit masks per node: a placement
 * asks about every GPU of every node it visits, and a set of boxed keys answers each with a hash look-up. Made once
 * per pair of sets and shared by the placements that use them (a round's backfill candidates all place outside the
 * same reservation). Only for GPUs 0-63: {@link #of} gives null when a set names a later one.
 */
public final class GpuMasks {
    private final int[] nodes;          // sorted ids of the nodes either set names
    private final long[] excluded, only;
    private final boolean onlyGiven;

    private GpuMasks(int[] nodes, long[] excluded, long[] only, boolean onlyGiven) {
        this.nodes = nodes;
        this.excluded = excluded;
        this.only = only;
        this.onlyGiven = onlyGiven;
    }

    /** The masks of these sets ({@code only} null: any GPU not excluded), or null when a set names a GPU past 63. */
    public static GpuMasks of(Set<Long> excludedGpus, Set<Long> onlyGpus) {
        int[] ids = new int[excludedGpus.size() + (onlyGpus == null ? 0 : onlyGpus.size())];
        int k = 0;
        for (long key : excludedGpus) {
            if ((key & 0xFF) >= Long.SIZE) return null;
            ids[k++] = (int) (key >>> 8);
        }
        if (onlyGpus != null) {
            for (long key : onlyGpus) {
                if ((key & 0xFF) >= Long.SIZE) return null;
                ids[k++] = (int) (key >>> 8);
            }
        }
        Arrays.sort(ids);
        int distinct = 0;
        for (int i = 0; i < ids.length; i++) if (i == 0 || ids[i] != ids[i - 1]) ids[distinct++] = ids[i];
        int[] nodes = Arrays.copyOf(ids, distinct);
        long[] excluded = new long[distinct], only = new long[distinct];
        for (long key : excludedGpus) excluded[Arrays.binarySearch(nodes, (int) (key >>> 8))] |= 1L << (key & 0xFF);
        if (onlyGpus != null) {
            for (long key : onlyGpus) only[Arrays.binarySearch(nodes, (int) (key >>> 8))] |= 1L << (key & 0xFF);
        }
        return new GpuMasks(nodes, excluded, only, onlyGpus != null);
    }

    /** Whether the placement may not take GPU {@code gpu} (0-63) of node {@code node}. */
    boolean excluded(int node, int gpu) {
        int i = Arrays.binarySearch(nodes, node);
        long bit = 1L << gpu;
        if (onlyGiven && (i < 0 || (only[i] & bit) == 0)) return true;
        return i >= 0 && (excluded[i] & bit) != 0;
    }
}
