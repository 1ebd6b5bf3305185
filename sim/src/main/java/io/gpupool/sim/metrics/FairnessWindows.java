package io.gpupool.sim.metrics;

import java.util.ArrayList;
import java.util.List;

/**
 * Jain's fairness index over time windows of contention. A tenant's fair share at an instant is its
 * weighted max-min share of the pool given what it asks for (queued + running GPUs; water-filling: no
 * tenant is entitled to more than it asks, what one does not need is split among the others by weight).
 * Within each window of {@code windowMs}, over the time some job was queued (contention), each active
 * tenant's GPU-time held is divided by its fair GPU-time: x = held / fair (1 = exactly its share). The
 * window's index is Jain's (sum x)^2 / (n * sum x^2) over those tenants; the run's index is the mean over
 * windows weighted by their contended time, and 1 when nothing ever waited.
 *
 * <p>Why windows and not the whole run: once every job has finished, every tenant has had all the GPU-time
 * it asked for, whatever the policy, so an index over totals cannot tell policies apart. Who got the pool
 * while it was short is what differs.
 */
public final class FairnessWindows {
    /** One window: its start (ms since the first submit), the contended time in it, and Jain's index over its active tenants. */
    public record Window(long startMs, long contendedMs, double jain, int tenants) {}

    private final long originMs;
    private final long windowMs;
    private final List<Window> windows = new ArrayList<>();
    private double[] heldIntegral = new double[8];
    private double[] fairIntegral = new double[8];
    private long windowIndex;
    private long contendedMs;

    public FairnessWindows(long originMs, long windowMs) {
        if (windowMs <= 0) throw new IllegalArgumentException("window must be > 0");
        this.originMs = originMs;
        this.windowMs = windowMs;
    }

    /**
     * Adds [fromMs, toMs) during which tenant i held {@code held[i]} and was entitled to {@code fair[i]}
     * (only {@code active} tenants, the first {@code count} entries); {@code contended}: some job waited.
     */
    public void add(long fromMs, long toMs, boolean contended, int[] active, int count, long[] held, double[] fair) {
        while (fromMs < toMs) {
            long w = (fromMs - originMs) / windowMs;
            if (w != windowIndex) {
                close();
                windowIndex = w;
            }
            long end = Math.min(toMs, originMs + (w + 1) * windowMs);
            if (contended) {
                long dt = end - fromMs;
                contendedMs += dt;
                for (int k = 0; k < count; k++) {
                    int i = active[k];
                    ensure(i);
                    heldIntegral[i] += (double) held[i] * dt;
                    fairIntegral[i] += fair[i] * dt;
                }
            }
            fromMs = end;
        }
    }

    private void ensure(int i) {
        if (i < heldIntegral.length) return;
        int len = Math.max(i + 1, heldIntegral.length * 2);
        heldIntegral = java.util.Arrays.copyOf(heldIntegral, len);
        fairIntegral = java.util.Arrays.copyOf(fairIntegral, len);
    }

    private void close() {
        if (contendedMs > 0) {
            double sum = 0, sq = 0;
            int n = 0;
            for (int i = 0; i < fairIntegral.length; i++) {
                if (fairIntegral[i] <= 0) continue;
                double x = heldIntegral[i] / fairIntegral[i];
                sum += x;
                sq += x * x;
                n++;
            }
            if (n > 0) windows.add(new Window(windowIndex * windowMs, contendedMs, sq == 0 ? 1.0 : sum * sum / (n * sq), n));
        }
        java.util.Arrays.fill(heldIntegral, 0);
        java.util.Arrays.fill(fairIntegral, 0);
        contendedMs = 0;
    }

    /** Closes the current window; call once at the end. */
    public List<Window> finish() {
        close();
        return List.copyOf(windows);
    }

    /** The run's index: windows' indices weighted by contended time; 1 when nothing waited. */
    public static double overall(List<Window> windows) {
        double num = 0, den = 0;
        for (Window w : windows) {
            num += w.jain() * w.contendedMs();
            den += w.contendedMs();
        }
        return den == 0 ? 1.0 : num / den;
    }

    /**
     * Weighted max-min fair shares of {@code capacity} for the given demands (water-filling): tenants in
     * order of demand / weight get their demand while it is below the level, the rest split what is left
     * by weight. Writes into {@code fair} for the first {@code count} tenants of {@code active}.
     */
    public static void waterFill(double capacity, int[] active, int count, long[] demand, double[] weight, double[] fair) {
        waterFill(capacity, active, count, demand, weight, fair, new int[count]);
    }

    /**
     * As {@link #waterFill(double, int[], int, long[], double[], double[])}, ordering the tenants in {@code order} (at least
     * {@code count} long; its contents are overwritten): the recorder water-fills at every instant and reuses one buffer.
     */
    public static void waterFill(double capacity, int[] active, int count, long[] demand, double[] weight, double[] fair, int[] order) {
        sortByRatio(active, count, demand, weight, order);
        double left = capacity, wLeft = 0;
        for (int k = 0; k < count; k++) wLeft += weight[active[k]];
        for (int k = 0; k < count; k++) {
            int i = order[k];
            double level = left / wLeft;
            if (demand[i] <= level * weight[i]) {
                fair[i] = demand[i];
                left -= demand[i];
                wLeft -= weight[i];
            } else {
                for (int r = k; r < count; r++) fair[order[r]] = level * weight[order[r]];
                return;
            }
        }
    }

    /** Tenants by demand / weight, ascending, into {@code order} (insertion sort: a handful of tenants, called at every event). */
    private static void sortByRatio(int[] active, int count, long[] demand, double[] weight, int[] order) {
        System.arraycopy(active, 0, order, 0, count);
        if (count > 64) {
            Integer[] boxed = new Integer[count];
            for (int k = 0; k < count; k++) boxed[k] = order[k];
            java.util.Arrays.sort(boxed, (a, b) -> Double.compare(demand[a] / weight[a], demand[b] / weight[b]));
            for (int k = 0; k < count; k++) order[k] = boxed[k];
            return;
        }
        for (int k = 1; k < count; k++) {
            int t = order[k];
            double key = demand[t] / weight[t];
            int m = k - 1;
            while (m >= 0 && demand[order[m]] / weight[order[m]] > key) {
                order[m + 1] = order[m];
                m--;
            }
            order[m + 1] = t;
        }
    }
}
