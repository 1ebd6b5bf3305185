package io.gpupool.server.core;

import java.util.Arrays;
import java.util.BitSet;

/**
 * A job array as {@code submit --array} writes it, Slurm's syntax: comma-separated indices ({@code 1,3,5}), ranges
 * ({@code 0-199}) and ranges with a step ({@code 0-15:4}), then optionally {@code %N}, the most tasks that run at
 * once. Indices are kept sorted and distinct.
 *
 * @param indices the task indices, ascending
 * @param cap     the most tasks running at once; 0 = no cap
 */
public record ArraySpec(int[] indices, int cap) {
    /** Slurm's highest allowed MaxArraySize is 4000001, so indices up to 4000000. */
    public static final int MAX_INDEX = 4_000_000;
    /** The most tasks one submission creates (each is a job: memory and one transaction bound it). */
    public static final int MAX_TASKS = 50_000;
    private static final String FIELD = "array";

    public ArraySpec {
        indices = indices.clone();
    }

    public static ArraySpec parse(String text) {
        if (text == null || text.isBlank()) throw ServiceException.invalid(FIELD, "must not be empty (e.g. 0-199%16)");
        if (text.length() > 4096) throw ServiceException.invalid(FIELD, "must be at most 4096 characters");
        String list = text.trim();
        int cap = 0;
        int pct = list.indexOf('%');
        if (pct >= 0) {
            cap = number(list.substring(pct + 1), "the cap after %");
            if (cap < 1) throw ServiceException.invalid(FIELD, "the cap after % must be at least 1, got " + cap);
            list = list.substring(0, pct);
        }
        BitSet set = new BitSet();
        int count = 0;
        for (String item : list.split(",", -1)) {
            String range = item;
            int step = 1;
            int colon = item.indexOf(':');
            if (colon >= 0) {
                step = number(item.substring(colon + 1), "the step in '" + clip(item) + "'");
                if (step < 1) throw ServiceException.invalid(FIELD, "the step in '" + clip(item) + "' must be at least 1");
                range = item.substring(0, colon);
            }
            int dash = range.indexOf('-');
            int from = number(dash >= 0 ? range.substring(0, dash) : range, "'" + clip(item) + "'");
            int to = dash >= 0 ? number(range.substring(dash + 1), "'" + clip(item) + "'") : from;
            if (colon >= 0 && dash < 0) throw ServiceException.invalid(FIELD, "a step needs a range, as in 0-15:4, got '" + clip(item) + "'");
            if (to < from) throw ServiceException.invalid(FIELD, "range '" + clip(item) + "' ends before it starts");
            for (long i = from; i <= to; i += step) {
                if (set.get((int) i)) continue;
                set.set((int) i);
                if (++count > MAX_TASKS) throw ServiceException.invalid(FIELD, "at most " + MAX_TASKS + " tasks per array");
            }
        }
        return new ArraySpec(set.stream().toArray(), cap);
    }

    private static int number(String s, String what) {
        String t = s.trim();
        if (t.isEmpty() || t.length() > 9 || !t.chars().allMatch(Character::isDigit)) {
            throw ServiceException.invalid(FIELD, what + " must be a whole number from 0 to " + MAX_INDEX + ", got '" + clip(t) + "'");
        }
        int n = Integer.parseInt(t);
        if (n > MAX_INDEX) throw ServiceException.invalid(FIELD, what + " must be at most " + MAX_INDEX + ", got " + n);
        return n;
    }

    public int size() { return indices.length; }

    @Override
    public String toString() {
        return Arrays.toString(indices) + (cap > 0 ? "%" + cap : "");
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ArraySpec a && a.cap == cap && Arrays.equals(a.indices, indices);
    }

    @Override
    public int hashCode() { return 31 * Arrays.hashCode(indices) + cap; }

    private static String clip(String s) {
        return s.length() > 40 ? s.substring(0, 40) + "..." : s;
    }
}
