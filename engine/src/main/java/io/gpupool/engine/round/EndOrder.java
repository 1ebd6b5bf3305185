package io.gpupool.engine.round;

/**
 * The indices 0..n-1 of two arrays taken in ascending order of {@code (end[i], seq[i])} (seq unique, so the order is
 * total and the sequence taken is the sorted one). The first is found by one scan; a binary heap of the rest is
 * built only when a second is asked for. An EASY reservation most often needs only the job that ends first.
 */
final class EndOrder {
    private final long[] end;
    private final long[] seq;
    private final int[] heap;   // live indices in [0, size); a heap once built
    private int size;
    private boolean tookFirst;  // the first (found by the scan) was taken
    private boolean built;

    EndOrder(long[] end, long[] seq) {
        this.end = end;
        this.seq = seq;
        size = end.length;
        heap = new int[size];
        int first = 0;
        for (int i = 0; i < size; i++) {
            heap[i] = i;
            if (before(i, first)) first = i;
        }
        if (size > 0) {
            // the first to end goes to the front, where next() takes it before any heap is built
            heap[first] = heap[0];
            heap[0] = first;
        }
    }

    boolean isEmpty() { return size == 0; }

    /** The next index (the order must not be empty). */
    int next() {
        if (!built) {
            if (!tookFirst) {
                tookFirst = true;
                int first = heap[0];
                heap[0] = heap[--size];
                return first;
            }
            for (int i = size / 2 - 1; i >= 0; i--) siftDown(i);
            built = true;
        }
        int top = heap[0];
        heap[0] = heap[--size];
        if (size > 0) siftDown(0);
        return top;
    }

    private boolean before(int a, int b) {
        return end[a] != end[b] ? end[a] < end[b] : seq[a] < seq[b];
    }

    private void siftDown(int i) {
        int x = heap[i];
        while (true) {
            int c = 2 * i + 1;
            if (c >= size) break;
            if (c + 1 < size && before(heap[c + 1], heap[c])) c++;
            if (!before(heap[c], x)) break;
            heap[i] = heap[c];
            i = c;
        }
        heap[i] = x;
    }
}
