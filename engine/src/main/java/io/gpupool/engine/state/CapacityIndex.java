package io.gpupool.engine.state;

import io.gpupool.model.GpuShare;

import java.util.Arrays;

/**
 * Buckets of schedulable nodes by free capacity, per GPU model, so that placement visits only nodes
 * that can hold a request instead of scanning the cluster. Three bucketings: by number of fully free
 * GPUs (whole-GPU requests), by the most idle GPUs inside one NVLink domain (whole-GPU requests that must
 * stay inside one domain) and by the largest free share on one GPU (fractional requests).
 * Buckets are bit sets visited in node-id order: O(1) updates, and the visiting order depends only on the
 * current state, never on the history of updates, so a rolled-back what-if leaves it exactly as it was.
 */
final class CapacityIndex {
    static final int MILLI_BUCKET = 50;
    static final int MILLI_BUCKETS = GpuShare.WHOLE / MILLI_BUCKET + 1;

    private final Bucketing byFreeGpus;
    private final Bucketing byFreeInNvlinkDomain;
    private final Bucketing byShareMilli;

    CapacityIndex(int maxGpus) {
        byFreeGpus = new Bucketing(maxGpus + 1);
        byFreeInNvlinkDomain = new Bucketing(maxGpus + 1);
        byShareMilli = new Bucketing(MILLI_BUCKETS);
    }

    void update(NodeState n) {
        if (n.cordoned) {
            byFreeGpus.remove(n.id);
            byFreeInNvlinkDomain.remove(n.id);
            byShareMilli.remove(n.id);
            return;
        }
        byFreeGpus.put(n.id, Math.min(n.fullyFreeGpus, byFreeGpus.bucketCount() - 1));
        byFreeInNvlinkDomain.put(n.id, Math.min(n.maxIdleInNvlinkDomain, byFreeInNvlinkDomain.bucketCount() - 1));
        if (n.maxShareableMilli < 0) byShareMilli.remove(n.id);
        else byShareMilli.put(n.id, n.maxShareableMilli / MILLI_BUCKET);
    }

    int maxFreeGpuBucket() { return byFreeGpus.bucketCount() - 1; }

    /** Visits the nodes with exactly k fully free GPUs in id order; false when the visitor stopped. */
    boolean visitFreeGpuBucket(int k, java.util.function.IntPredicate v) { return byFreeGpus.visit(k, v); }

    /** Visits the nodes with exactly k idle GPUs in their best NVLink domain, in id order; false when stopped. */
    boolean visitNvlinkBucket(int k, java.util.function.IntPredicate v) { return byFreeInNvlinkDomain.visit(k, v); }

    /** Visits the nodes whose largest free share falls in bucket b, in id order; false when stopped. */
    boolean visitShareBucket(int b, java.util.function.IntPredicate v) { return byShareMilli.visit(b, v); }

    /**
     * One bucketing: each node in at most one bucket. A bucket is a plain bit set of node ids (java.util.BitSet
     * rescans for its highest word on every clear, which showed in profiles of long replays).
     */
    private static final class Bucketing {
        private final long[][] members;
        private int[] bucketOf = new int[0];

        Bucketing(int buckets) {
            members = new long[buckets][1];
        }

        int bucketCount() { return members.length; }

        boolean visit(int b, java.util.function.IntPredicate v) {
            // like BitSet.nextSetBit: the bucket is re-read after each visit, so it is always the live one
            for (int w = 0; w < members[b].length; w++) {
                long bits = members[b][w];
                while (bits != 0) {
                    int node = (w << 6) + Long.numberOfTrailingZeros(bits);
                    if (!v.test(node)) return false;
                    bits = members[b][w] & (-2L << (node & 63));   // the bits above node
                }
            }
            return true;
        }

        void put(int node, int bucket) {
            ensure(node);
            int cur = bucketOf[node];
            if (cur == bucket) return;
            if (cur >= 0) members[cur][node >>> 6] &= ~(1L << node);
            members[bucket][node >>> 6] |= 1L << node;
            bucketOf[node] = bucket;
        }

        void remove(int node) {
            ensure(node);
            int b = bucketOf[node];
            if (b < 0) return;
            members[b][node >>> 6] &= ~(1L << node);
            bucketOf[node] = -1;
        }

        private void ensure(int node) {
            if (node < bucketOf.length) return;
            int old = bucketOf.length;
            int len = Math.max(node + 1, old * 2);
            bucketOf = Arrays.copyOf(bucketOf, len);
            Arrays.fill(bucketOf, old, len, -1);
            int words = (len + 63) >>> 6;
            for (int b = 0; b < members.length; b++) {
                if (members[b].length < words) members[b] = Arrays.copyOf(members[b], words);
            }
        }
    }
}
