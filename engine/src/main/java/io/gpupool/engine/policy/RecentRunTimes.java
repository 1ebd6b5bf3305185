package io.gpupool.engine.policy;

import java.util.Arrays;

/**
 * The latest run times of one kind of job (a ring of fixed capacity) and their median, which is cached
 * until the next {@link #add}. The building block of history-based run-time predictors. The ring starts
 * small and grows to its capacity, since most kinds of jobs are seen only a few times.
 */
public final class RecentRunTimes {
    private final int capacity;
    private long[] values;
    private int size;
    private int next;
    private long median = -1;   // cached until the next add

    public RecentRunTimes(int capacity) {
        if (capacity < 1) throw new IllegalArgumentException("capacity must be >= 1, got " + capacity);
        this.capacity = capacity;
        values = new long[Math.min(capacity, 4)];
    }

    public void add(long runMs) {
        median = -1;
        if (size == values.length && size < capacity) {
            // still filling in order (oldest at 0): grow and append after the last
            values = Arrays.copyOf(values, Math.min(capacity, 2 * size));
            next = size;
        }
        values[next] = runMs;
        next = (next + 1) % values.length;
        if (size < values.length) size++;
    }

    public int size() {
        return size;
    }

    /** Median of the kept run times; undefined (0) when empty. */
    public long median() {
        if (size == 0) return 0;
        if (median < 0) {
            long[] c = Arrays.copyOf(values, size);
            Arrays.sort(c);
            median = size % 2 == 1 ? c[size / 2] : (c[size / 2 - 1] + c[size / 2]) / 2;
        }
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
