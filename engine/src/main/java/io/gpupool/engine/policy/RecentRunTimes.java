package io.gpupool.engine.policy;

import java.util.Arrays;

/**
 * The latest run times of one kind of job (a ring of fixed capacity) and their median. The building block of
 * history-based run-time predictors. The ring starts small and grows to its capacity, since most kinds of jobs are
 * seen only a few times. The same values are also kept sorted, updated at each {@link #add} (the evicted value out,
 * the new one in: one shift of at most the capacity), so the median is read, not sorted: an EASY reservation reads
 * the prediction of every running job after each completion, and each completion changes three histories.
 */
public final class RecentRunTimes {
    private final int capacity;
    private long[] values;
    private long[] sorted;      // values[0..size) in ascending order
    private long median;        // of sorted, set at each add (readers of a prediction touch this object only)
    private int size;
    private int next;

    public RecentRunTimes(int capacity) {
        if (capacity < 1) throw new IllegalArgumentException("capacity must be >= 1, got " + capacity);
        this.capacity = capacity;
        values = new long[Math.min(capacity, 4)];
        sorted = new long[values.length];
    }

    public void add(long runMs) {
        if (size == values.length && size < capacity) {
            // still filling in order (oldest at 0): grow and append after the last
            values = Arrays.copyOf(values, Math.min(capacity, 2 * size));
            sorted = Arrays.copyOf(sorted, values.length);
            next = size;
        }
        int n = size;
        if (size == values.length) {
            // full: the oldest value (overwritten below) leaves the sorted copy
            int at = Arrays.binarySearch(sorted, 0, n, values[next]);
            System.arraycopy(sorted, at + 1, sorted, at, n - at - 1);
            n--;
        }
        int at = Arrays.binarySearch(sorted, 0, n, runMs);
        if (at < 0) at = -at - 1;
        System.arraycopy(sorted, at, sorted, at + 1, n - at);
        sorted[at] = runMs;
        values[next] = runMs;
        next = (next + 1) % values.length;
        if (size < values.length) size++;
        median = size % 2 == 1 ? sorted[size / 2] : (sorted[size / 2 - 1] + sorted[size / 2]) / 2;
    }

    public int size() {
        return size;
    }

    /** Median of the kept run times; undefined (0) when empty. */
    public long median() {
        return median;
    }

    /** The kept run times, oldest first (for saving a predictor). */
    public long[] oldestFirst() {
        long[] out = new long[size];
        int start = size < capacity ? 0 : next;
        for (int i = 0; i < size; i++) out[i] = values[(start + i) % values.length];
        return out;
    }
}
