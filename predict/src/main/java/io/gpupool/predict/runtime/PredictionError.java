package io.gpupool.predict.runtime;

import java.util.Arrays;

/**
 * How far predictions are from the truth, on a log scale since run times span seconds to weeks:
 * the median of |ln(predicted / actual)| (0.69 = off by 2x) and the share of jobs predicted within 2x.
 */
public record PredictionError(int jobs, double medianAbsLogError, double within2x) {
    private static final double LN2 = Math.log(2);

    public static PredictionError of(long[] predictedMs, long[] actualMs) {
        if (predictedMs.length != actualMs.length) throw new IllegalArgumentException("lengths differ");
        int n = predictedMs.length;
        if (n == 0) return new PredictionError(0, Double.NaN, Double.NaN);
        double[] err = new double[n];
        int within = 0;
        for (int i = 0; i < n; i++) {
            err[i] = Math.abs(Math.log((double) Math.max(1, predictedMs[i]) / Math.max(1, actualMs[i])));
            if (err[i] <= LN2 + 1e-12) within++;
        }
        Arrays.sort(err);
        double median = n % 2 == 1 ? err[n / 2] : (err[n / 2 - 1] + err[n / 2]) / 2;
        return new PredictionError(n, median, (double) within / n);
    }
}
