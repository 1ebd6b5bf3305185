package io.gpupool.optimize;

import io.gpupool.model.GpuShare;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * Valid inequalities for packing fractional shares onto GPUs, used to make the per-node share counts of the
 * CP-SAT model nearly exact. For a weighting f of share sizes, the shares on a GPU with c free thousandths
 * weigh at most {@code capacity(c)}: the best total weight of any shares of the batch's sizes that fit in c
 * (an unbounded knapsack, computed once for every c). So on a node, the shares' total weight is at most the
 * sum of its GPUs' capacities. Weightings used: the size itself (volume), "at least m" for each size m
 * (how many large shares fit), Martello and Toth's f_e (shares above 1000 - e count whole, below e count
 * nothing) for each size e up to 500, and Fekete and Schepers' u^(k) for k = 1..4.
 */
final class PackingBounds {
    /** A weighting of share sizes with its per-GPU capacity table. */
    static final class Weighting {
        private final long[] weight;    // by size in thousandths
        private final long[] capacity;  // by free compute

        Weighting(long[] weight, int[] sizes) {
            this.weight = weight;
            this.capacity = new long[GpuShare.WHOLE + 1];
            for (int c = 1; c <= GpuShare.WHOLE; c++) {
                long best = capacity[c - 1];
                for (int s : sizes) if (s <= c) best = Math.max(best, capacity[c - s] + weight[s]);
                capacity[c] = best;
            }
        }

        long of(int size) { return weight[size]; }

        long capacity(int free) { return capacity[Math.clamp(free, 0, GpuShare.WHOLE)]; }
    }

    private final List<Weighting> weightings = new ArrayList<>();

    PackingBounds(int[] shareSizes) {
        TreeSet<Integer> distinct = new TreeSet<>();
        for (int s : shareSizes) distinct.add(s);
        int[] sizes = distinct.stream().mapToInt(Integer::intValue).toArray();
        if (sizes.length == 0) return;
        add(sizes, x -> x);
        for (int m : sizes) if (m > sizes[0]) add(sizes, x -> x >= m ? 1 : 0);
        for (int e : sizes) {
            if (e > GpuShare.WHOLE / 2) continue;
            add(sizes, x -> x > GpuShare.WHOLE - e ? GpuShare.WHOLE : x >= e ? x : 0);
        }
        for (int k = 1; k <= 4; k++) {
            int kk = k;
            add(sizes, x -> (long) (kk + 1) * x % GpuShare.WHOLE == 0 ? (long) kk * x : (long) (kk + 1) * x / GpuShare.WHOLE * GpuShare.WHOLE);
        }
    }

    private void add(int[] sizes, java.util.function.IntToLongFunction f) {
        long[] w = new long[GpuShare.WHOLE + 1];
        for (int x = 0; x <= GpuShare.WHOLE; x++) w[x] = f.applyAsLong(x);
        weightings.add(new Weighting(w, sizes));
    }

    List<Weighting> weightings() {
        return weightings;
    }
}
