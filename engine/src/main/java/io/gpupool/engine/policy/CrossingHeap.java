package io.gpupool.engine.policy;

import java.util.Arrays;
import java.util.List;

/**
 * Running jobs' entries by the time of their next band crossing ({@link RunningBands}), as a binary heap whose items
 * know their place in it: a start, an end or a re-banded job moves a few array slots, where a sorted tree made and
 * rebalanced a node for each (the tree's updates were half of gittins' re-banding, 230k times in a Philly replay). Only
 * the earliest item and the items due by some time are asked for, never a full order.
 */
final class CrossingHeap<E extends CrossingHeap.Item> {
    /** What the heap orders: an entry's next crossing (Long.MAX_VALUE: none) and its slot (-1: not in the heap). */
    static class Item {
        long crossingMs;
        int slot = -1;
    }

    private Item[] heap = new Item[16];
    private int size;

    boolean isEmpty() {
        return size == 0;
    }

    /** An item with the earliest crossing; the heap must not be empty. */
    @SuppressWarnings("unchecked")
    E first() {
        return (E) heap[0];
    }

    void add(E e) {
        if (size == heap.length) heap = Arrays.copyOf(heap, 2 * size);
        heap[size] = e;
        e.slot = size++;
        up(e.slot);
    }

    void remove(E e) {
        int at = e.slot;
        e.slot = -1;
        Item last = heap[--size];
        heap[size] = null;
        if (at == size) return;
        heap[at] = last;
        last.slot = at;
        settle(at);
    }

    /** The item's crossing changed while in the heap: put it where it now belongs. */
    void changed(E e) {
        settle(e.slot);
    }

    /** Moves the item at {@code at}, which may be earlier or later than its neighbours now, to its place. */
    private void settle(int at) {
        if (!up(at)) down(at);
    }

    /** Adds to {@code out} every item whose crossing is at or before {@code bound}, in no particular order. */
    @SuppressWarnings("unchecked")
    void collectDue(long bound, List<? super E> out) {
        if (size == 0 || heap[0].crossingMs > bound) return;
        int from = out.size();
        out.add((E) heap[0]);
        // a breadth-first walk over the due items only: an item's children are never earlier than it
        for (int k = from; k < out.size(); k++) {
            int child = 2 * ((Item) out.get(k)).slot + 1;
            for (int c = child; c <= child + 1 && c < size; c++) {
                if (heap[c].crossingMs <= bound) out.add((E) heap[c]);
            }
        }
    }

    /** Moves the item at {@code at} towards the root while it is earlier than its parent; whether it moved. */
    private boolean up(int at) {
        Item e = heap[at];
        int start = at;
        while (at > 0) {
            int parent = (at - 1) >>> 1;
            Item p = heap[parent];
            if (p.crossingMs <= e.crossingMs) break;
            heap[at] = p;
            p.slot = at;
            at = parent;
        }
        heap[at] = e;
        e.slot = at;
        return at != start;
    }

    private void down(int at) {
        Item e = heap[at];
        int half = size >>> 1;
        while (at < half) {
            int child = 2 * at + 1;
            Item c = heap[child];
            int right = child + 1;
            if (right < size && heap[right].crossingMs < c.crossingMs) c = heap[child = right];
            if (e.crossingMs <= c.crossingMs) break;
            heap[at] = c;
            c.slot = at;
            at = child;
        }
        heap[at] = e;
        e.slot = at;
    }
}
