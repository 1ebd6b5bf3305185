package io.gpupool.engine.round;

import io.gpupool.engine.policy.IndexHeap;

/**
 * The indices 0..n-1 of two arrays taken in ascending order of {@code (end[i], seq[i])} (seq unique, so the order is
 * total and the sequence taken is the sorted one). The first is found by one scan; a binary heap of the rest is
 * built only when a second is asked for. An EASY reservation most often needs only the job that ends first.
 */
final class EndOrder extends IndexHeap {
    private final long[] end;
    private final long[] seq;
    private boolean tookFirst;  // the first (found by the scan) was taken
    private boolean built;

    EndOrder(long[] end, long[] seq) {
        this(end, seq, end.length, null);
    }

    /** The first {@code n} entries of the arrays; the heap's indices go in {@code buffer} when it is large enough. */
    EndOrder(long[] end, long[] seq, int n, int[] buffer) {
        super(n, buffer);
        this.end = end;
        this.seq = seq;
        int first = 0;
        for (int i = 1; i < n; i++) if (before(i, first)) first = i;
        if (n > 0) swapToFront(first);
    }

    /** The next index (the order must not be empty). */
    int next() {
        if (!built) {
            if (!tookFirst) {
                tookFirst = true;
                return takeFrontUnordered();
            }
            heapify();
            built = true;
        }
        return takeFirst();
    }

    @Override
    protected boolean before(int a, int b) {
        return end[a] != end[b] ? end[a] < end[b] : seq[a] < seq[b];
    }
}
