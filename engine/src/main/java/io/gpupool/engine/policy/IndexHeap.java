package io.gpupool.engine.policy;

import java.util.Arrays;

/**
 * A binary min-heap of indices into arrays its subclass owns (keys, jobs), ordered by {@link #before}: built in O(n)
 * from indices 0..n-1, then O(log n) per take. For orders a round needs only the first few entries of (expected
 * ends, a round's queue by a computed key), where sorting everything each round would cost O(n log n).
 */
public abstract class IndexHeap {
    private int[] heap;
    private int size;

    /** A heap of the indices 0..n-1; call {@link #heapify()} once the subclass's arrays are filled. */
    protected IndexHeap(int n) {
        this(n, null);
    }

    /** The same over {@code buffer} when it holds n entries (a caller's scratch, reused from round to round). */
    protected IndexHeap(int n, int[] buffer) {
        heap = buffer != null && buffer.length >= Math.max(1, n) ? buffer : new int[Math.max(1, n)];
        for (int i = 0; i < n; i++) heap[i] = i;
        size = n;
    }

    /** Whether the entry at index {@code a} comes before the one at {@code b}. */
    protected abstract boolean before(int a, int b);

    protected final void heapify() {
        for (int i = size / 2 - 1; i >= 0; i--) siftDown(i);
    }

    public final boolean isEmpty() { return size == 0; }

    /** Takes the first index out (the heap must not be empty). */
    protected final int takeFirst() {
        int top = heap[0];
        heap[0] = heap[--size];
        if (size > 0) siftDown(0);
        return top;
    }

    /**
     * Before {@link #heapify()}: puts the entry at array position {@code position} in front, where
     * {@link #takeFrontUnordered()} takes it without the heap being built (for an order whose first entry a
     * scan finds, and whose rest is often never asked for).
     */
    protected final void swapToFront(int position) {
        int x = heap[position];
        heap[position] = heap[0];
        heap[0] = x;
    }

    /** Before {@link #heapify()}: takes the front entry out, leaving the rest unordered. */
    protected final int takeFrontUnordered() {
        int first = heap[0];
        heap[0] = heap[--size];
        return first;
    }

    /** Adds an index whose entry the subclass has just filled. */
    protected final void add(int index) {
        if (size == heap.length) heap = Arrays.copyOf(heap, 2 * size);
        heap[size] = index;
        siftUp(size++);
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

    private void siftUp(int i) {
        int x = heap[i];
        while (i > 0) {
            int p = (i - 1) / 2;
            if (!before(x, heap[p])) break;
            heap[i] = heap[p];
            i = p;
        }
        heap[i] = x;
    }
}
