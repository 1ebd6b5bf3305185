package io.gpupool.optimize;

import java.util.ArrayList;
import java.util.List;

/**
 * The ways to fill one GPU with fractional shares (the "patterns" of Gilmore and Gomory's cutting-stock
 * model): every multiset of share sizes that fits the GPU's free compute, memory and task slots, and is
 * maximal (no further share of the batch fits beside it). Any set of shares that fits a GPU is contained in
 * a maximal pattern, so "the shares of each size on a class of identical GPUs are at most what the chosen
 * patterns hold" is exact: it admits exactly the share sets that pack. The twelve openb share sizes give 152
 * maximal patterns for an idle 80 GB GPU with 10 task slots, and a handful for a partly used one.
 */
final class SharePatterns {
    /** One share size on this GPU: compute in thousandths and memory in MiB. */
    record Size(int milli, long memory) {}

    private final int milli;
    private final long memory;
    private final int tasks;
    private final List<Size> sizes;
    private final int[] most;
    private final int limit;
    private final List<int[]> found = new ArrayList<>();
    private final int[] count;
    private long steps;

    private SharePatterns(int milli, long memory, int tasks, List<Size> sizes, int[] most, int limit) {
        this.milli = milli;
        this.memory = memory;
        this.tasks = tasks;
        this.sizes = sizes;
        this.most = most;
        this.limit = limit;
        this.count = new int[sizes.size()];
    }

    /**
     * The maximal patterns of a GPU with this free compute, memory and task slots, as counts per size (in the
     * order of {@code sizes}), at most {@code most[i]} of size i (the batch holds no more); null when there
     * are more than {@code limit} of them (the caller then falls back to a relaxation).
     */
    static List<int[]> maximal(int milli, long memory, int tasks, List<Size> sizes, int[] most, int limit) {
        SharePatterns s = new SharePatterns(milli, memory, tasks, sizes, most, limit);
        return s.extend(0, milli, memory, tasks) ? s.found : null;
    }

    /** Depth first over sizes; false once the limit is passed. */
    private boolean extend(int i, int milliLeft, long memoryLeft, int tasksLeft) {
        if (++steps > 200L * limit) return false;
        if (i == sizes.size()) {
            if (!maximal(milliLeft, memoryLeft, tasksLeft)) return true;
            if (found.size() == limit) return false;
            found.add(count.clone());
            return true;
        }
        Size s = sizes.get(i);
        int k = 0;
        for (; k <= most[i] && k * (long) s.milli() <= milliLeft && k * s.memory() <= memoryLeft && k <= tasksLeft; k++) {
            count[i] = k;
            if (!extend(i + 1, milliLeft - k * s.milli(), memoryLeft - k * s.memory(), tasksLeft - k)) return false;
        }
        count[i] = 0;
        return true;
    }

    private boolean maximal(int milliLeft, long memoryLeft, int tasksLeft) {
        if (tasksLeft == 0) return true;
        for (int i = 0; i < sizes.size(); i++) {
            Size s = sizes.get(i);
            if (count[i] < most[i] && s.milli() <= milliLeft && s.memory() <= memoryLeft) return false;
        }
        return true;
    }

    /** Whether the pattern holds at least the given counts (so a GPU holding those shares may use it). */
    static boolean covers(int[] pattern, int[] counts) {
        for (int i = 0; i < pattern.length; i++) if (pattern[i] < counts[i]) return false;
        return true;
    }
}
