package io.gpupool.sim.metrics;

import java.util.Arrays;

/**
 * Time integrals of piecewise-constant quantities in equal buckets, for "X over time" charts of a run of
 * unknown length: when time runs past the last bucket, the bucket width doubles and neighbours merge
 * (integrals add exactly), so memory stays at most {@code maxBuckets} per quantity however long the run.
 * Quantity {@code q}'s average in bucket {@code b} is {@code integral(q, b) / width}.
 */
public final class TimeSeries {
    private final long originMs;
    private final int maxBuckets;
    private long widthMs;
    private double[][] integral;
    private int used;            // buckets touched so far
    private long endMs;          // latest time anything was added up to

    public TimeSeries(long originMs, long initialWidthMs, int maxBuckets, int quantities) {
        if (maxBuckets < 2 || maxBuckets % 2 != 0) throw new IllegalArgumentException("maxBuckets must be even and >= 2");
        this.originMs = originMs;
        this.widthMs = Math.max(1, initialWidthMs);
        this.maxBuckets = maxBuckets;
        this.integral = new double[quantities][maxBuckets];
    }

    /** Makes room for more quantities (e.g. a tenant seen for the first time). */
    public void ensureQuantities(int n) {
        if (n <= integral.length) return;
        int old = integral.length;
        integral = Arrays.copyOf(integral, Math.max(n, old * 2));
        for (int q = old; q < integral.length; q++) integral[q] = new double[maxBuckets];
    }

    /** Adds {@code value} held over [fromMs, toMs) to quantity q. */
    public void add(int q, long fromMs, long toMs, double value) {
        if (toMs <= fromMs || value == 0) return;
        fit(toMs);
        long a = fromMs - originMs, b = toMs - originMs;
        int first = (int) (a / widthMs), last = (int) ((b - 1) / widthMs);
        double[] s = integral[q];
        for (int k = first; k <= last; k++) {
            long lo = Math.max(a, k * widthMs), hi = Math.min(b, (k + 1) * widthMs);
            s[k] += value * (hi - lo);
        }
        used = Math.max(used, last + 1);
        endMs = Math.max(endMs, toMs);
    }

    /** Widens buckets until {@code toMs} falls inside the last one. */
    private void fit(long toMs) {
        while (toMs - originMs > (long) maxBuckets * widthMs) {
            for (double[] s : integral) {
                for (int k = 0; k < maxBuckets / 2; k++) s[k] = s[2 * k] + s[2 * k + 1];
                Arrays.fill(s, maxBuckets / 2, maxBuckets, 0);
            }
            used = (used + 1) / 2;
            widthMs *= 2;
        }
    }

    public long widthMs() { return widthMs; }
    /** Buckets up to the last one anything was added to. */
    public int buckets() { return used; }

    /**
     * Averages of quantity q per bucket (integral / time covered), for the first {@link #buckets()} buckets;
     * the last bucket is averaged over the part of it the run reached.
     */
    public double[] averages(int q) {
        double[] out = new double[used];
        if (q >= integral.length) return out;
        for (int k = 0; k < used; k++) {
            long covered = Math.min(widthMs, endMs - originMs - k * widthMs);
            out[k] = covered > 0 ? integral[q][k] / covered : 0;
        }
        return out;
    }
}
