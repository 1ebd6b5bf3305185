package io.gpupool.engine.policy;

/**
 * Attained service (GPU-seconds) cut into geometric levels: level 0 below {@code first}, level i from
 * {@code first x ratio^(i-1)} up to the next edge, the last level unbounded. A job's level changes only when its
 * service crosses an edge, which is when a level-keyed order has to look at it again.
 */
final class ServiceLevels {
    private final double[] edges;   // edges[i]: lower edge of level i+1, in GPU-seconds

    ServiceLevels(double first, double ratio, double upTo) {
        int n = 1;
        while (first * Math.pow(ratio, n - 1) < upTo) n++;
        edges = new double[n];
        for (int i = 0; i < n; i++) edges[i] = first * Math.pow(ratio, i);
    }

    /** Number of levels (edges + 1). */
    int count() { return edges.length + 1; }

    /** The level of a service: the number of edges at or below it (binary search, so exact at the edges). */
    int levelOf(double gpuSec) {
        if (gpuSec < edges[0]) return 0;   // most asks: a waiting job that never ran, compared in the standing order
        int lo = 0, hi = edges.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (edges[mid] <= gpuSec) lo = mid + 1;
            else hi = mid;
        }
        return lo;
    }

    /** Lower edge of a level (0 for level 0). */
    double lower(int level) { return level == 0 ? 0 : edges[level - 1]; }

    /** Upper edge of a level; infinite for the last. */
    double upper(int level) { return level < edges.length ? edges[level] : Double.POSITIVE_INFINITY; }

    /** A service that stands for the level's jobs: its geometric middle (half the first edge for level 0, the last edge x ratio for the last). */
    double typical(int level) {
        if (level == 0) return edges[0] / 2;
        if (level == edges.length) return edges[edges.length - 1] * (edges.length > 1 ? edges[1] / edges[0] : 2);
        return Math.sqrt(edges[level - 1] * edges[level]);
    }
}
