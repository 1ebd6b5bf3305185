package io.gpupool.optimize;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Exact bin packing of one node's fractional shares onto its GPUs: the GPUs already shared (each with its own
 * free compute, memory and task slots) plus a number of idle GPUs. Depth-first, largest share first, never
 * trying two GPUs in the same state for the same share, with failed states remembered. Used to check (and
 * realise) the per-node share counts of the aggregated CP-SAT model.
 */
final class SharePacking {
    /** A share to place: compute, memory on this node, and which GPUs may take it (by bin index). */
    record Item(int milli, long memory, boolean[] allowed) {}

    /** A GPU: free compute, free memory, free task slots. */
    record Bin(int milli, long memory, int tasks) {}

    private final List<Item> items;
    private final int[] milli;
    private final long[] memory;
    private final int[] tasks;
    private final String[] kind;   // bins that started in the same state
    private final int[] assignment;
    private final Set<String> failed = new HashSet<>();

    private SharePacking(List<Item> items, List<Bin> bins) {
        this.items = items.stream().sorted((a, b) -> b.milli() != a.milli() ? Integer.compare(b.milli(), a.milli())
                : Long.compare(b.memory(), a.memory())).toList();
        milli = bins.stream().mapToInt(Bin::milli).toArray();
        memory = bins.stream().mapToLong(Bin::memory).toArray();
        tasks = bins.stream().mapToInt(Bin::tasks).toArray();
        kind = bins.stream().map(Bin::toString).toArray(String[]::new);
        assignment = new int[items.size()];
    }

    /**
     * A bin index for each item (in the order given), or null when the items do not fit the bins.
     */
    static int[] pack(List<Item> items, List<Bin> bins) {
        SharePacking s = new SharePacking(items, bins);
        if (!s.place(0)) return null;
        // map back to the caller's item order
        int[] out = new int[items.size()];
        boolean[] used = new boolean[items.size()];
        for (int i = 0; i < items.size(); i++) {
            for (int k = 0; k < s.items.size(); k++) {
                if (!used[k] && s.items.get(k) == items.get(i)) {
                    used[k] = true;
                    out[i] = s.assignment[k];
                    break;
                }
            }
        }
        return out;
    }

    /**
     * Best-fit decreasing when the items do not all fit: a bin index for each item (in the order given), -1 for
     * the items left out. Used to salvage a feasible answer from a model answer whose shares do not pack.
     */
    static int[] packPartly(List<Item> items, List<Bin> bins) {
        SharePacking s = new SharePacking(items, bins);
        int[] out = new int[items.size()];
        Integer[] order = new Integer[items.size()];
        for (int i = 0; i < order.length; i++) order[i] = i;
        Arrays.sort(order, (a, b) -> Integer.compare(items.get(b).milli(), items.get(a).milli()));
        for (int i : order) {
            Item it = items.get(i);
            int best = -1;
            for (int b = 0; b < s.milli.length; b++) {
                if (!it.allowed()[b] || s.milli[b] < it.milli() || s.memory[b] < it.memory() || s.tasks[b] < 1) continue;
                if (best < 0 || s.milli[b] < s.milli[best]) best = b;
            }
            out[i] = best;
            if (best >= 0) {
                s.milli[best] -= it.milli();
                s.memory[best] -= it.memory();
                s.tasks[best]--;
            }
        }
        return out;
    }

    private boolean place(int i) {
        if (i == items.size()) return true;
        String key = i + ":" + Arrays.toString(milli) + Arrays.toString(memory) + Arrays.toString(tasks);
        if (failed.contains(key)) return false;
        Item it = items.get(i);
        List<String> tried = new ArrayList<>();
        for (int b = 0; b < milli.length; b++) {
            if (!it.allowed()[b] || milli[b] < it.milli() || memory[b] < it.memory() || tasks[b] < 1) continue;
            String state = kind[b] + milli[b] + "/" + memory[b] + "/" + tasks[b];
            if (tried.contains(state)) continue;   // a GPU of the same kind in the same state gives the same outcome
            tried.add(state);
            milli[b] -= it.milli();
            memory[b] -= it.memory();
            tasks[b]--;
            assignment[i] = b;
            if (place(i + 1)) return true;
            milli[b] += it.milli();
            memory[b] += it.memory();
            tasks[b]++;
        }
        failed.add(key);
        return false;
    }
}
