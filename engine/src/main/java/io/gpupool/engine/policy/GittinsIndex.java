package io.gpupool.engine.policy;

/**
 * The Gittins index of each service level under a learned distribution of total service (Gittins, 1989; Tiresias'
 * dlas-gpu-gittins, NSDI'19). For a job that has attained {@code a} (the lower edge of its level) and a quantum
 * ending at {@code b} (an upper edge):
 * <pre>
 *   index(a) = max over b of  P(S <= b | S > a) / E[min(S, b) - a | S > a]
 * </pre>
 * the best rate at which running the job completes jobs per unit of service it consumes. Higher runs first. It
 * needs no run-time estimate: jobs of a kind that usually end soon after where this one stands rank high, jobs that
 * passed the point where most of their kind end drop. Counts are per level ({@link ServiceLevels}); each level's jobs
 * count as having the level's typical service.
 */
final class GittinsIndex {
    private GittinsIndex() {}

    /** One index per level from per-level counts of finished jobs' services (fractional counts allowed: a prior). */
    static double[] of(ServiceLevels levels, double[] counts) {
        int n = levels.count();
        double[] index = new double[n];
        for (int i = 0; i < n; i++) {
            double a = levels.lower(i);
            double survivors = 0;
            for (int m = i; m < n; m++) survivors += counts[m];
            if (survivors <= 0) continue;
            double best = 0, done = 0, work = 0;   // work: service used by the jobs done within the quantum
            for (int j = i; j < n; j++) {
                done += counts[j];
                work += counts[j] * Math.max(1e-9, levels.typical(j) - a);
                double b = levels.upper(j);
                double rest = survivors - done;
                double total = work + (Double.isInfinite(b) ? 0 : rest * (b - a));
                if (total > 0 && done > 0) best = Math.max(best, done / total);
            }
            index[i] = best;
        }
        return index;
    }
}
