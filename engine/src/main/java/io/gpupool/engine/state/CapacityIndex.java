package io.gpupool.engine.state;

import io.gpupool.model.GpuShare;

import java.util.Arrays;

/**
 * Buckets of schedulable nodes by free capacity, per GPU model, so that placement visits only nodes
 * that can hold a request instead of scanning the cluster. Two bucketings: by number of fully free
 * GPUs (whole-GPU requests) and by the largest free share on one GPU (fractional requests).
 * Buckets are swap-remove arrays: O(1) updates, deterministic iteration order.
 */
final class CapacityIndex {
    static final int MILLI_BUCKET = 50;
    static final int MILLI_BUCKETS = GpuShare.WHOLE / MILLI_BUCKET + 1;

    private final Bucketing byFreeGpus;
    private final Bucketing byShareMilli;

    CapacityIndex(int maxGpus) {
        byFreeGpus = new Bucketing(maxGpus + 1);
        byShareMilli = new Bucketing(MILLI_BUCKETS);
    }

    void update(NodeState n) {
        if (n.cordoned) {
            byFreeGpus.remove(n.id);
            byShareMilli.remove(n.id);
            return;
        }
        byFreeGpus.put(n.id, Math.min(n.fullyFreeGpus, byFreeGpus.bucketCount() - 1));
        if (n.maxShareableMilli < 0) byShareMilli.remove(n.id);
        else byShareMilli.put(n.id, n.maxShareableMilli / MILLI_BUCKET);
    }

    int maxFreeGpuBucket() { return byFreeGpus.bucketCount() - 1; }

    /** Nodes with exactly k fully free GPUs: ids[0..size) valid until the next update. */
    int[] freeGpuBucket(int k) { return byFreeGpus.items(k); }
    int freeGpuBucketSize(int k) { return byFreeGpus.size(k); }

    int[] shareBucket(int b) { return byShareMilli.items(b); }
    int shareBucketSize(int b) { return byShareMilli.size(b); }

    /** One bucketing: each node in at most one bucket. */
    private static final class Bucketing {
        private final int[][] items;
        private final int[] sizes;
        private int[] bucketOf = new int[0];
        private int[] position = new int[0];

        Bucketing(int buckets) {
            items = new int[buckets][4];
            sizes = new int[buckets];
        }

        int bucketCount() { return sizes.length; }
        int[] items(int b) { return items[b]; }
        int size(int b) { return sizes[b]; }

        void put(int node, int bucket) {
            ensure(node);
            int cur = bucketOf[node];
            if (cur == bucket) return;
            if (cur >= 0) remove(node);
            if (sizes[bucket] == items[bucket].length) items[bucket] = Arrays.copyOf(items[bucket], sizes[bucket] * 2);
            items[bucket][sizes[bucket]] = node;
            position[node] = sizes[bucket]++;
            bucketOf[node] = bucket;
        }

        void remove(int node) {
            ensure(node);
            int b = bucketOf[node];
            if (b < 0) return;
            int pos = position[node];
            int last = items[b][--sizes[b]];
            items[b][pos] = last;
            position[last] = pos;
            bucketOf[node] = -1;
        }

        private void ensure(int node) {
            if (node < bucketOf.length) return;
            int old = bucketOf.length;
            int len = Math.max(node + 1, old * 2);
            bucketOf = Arrays.copyOf(bucketOf, len);
            position = Arrays.copyOf(position, len);
            Arrays.fill(bucketOf, old, len, -1);
        }
    }
}
