package io.gpupool.predict.runtime;

import java.util.function.Function;

/**
 * A group of similar past jobs, from the most specific to the least. The history predictor answers with the
 * median of the first group that has enough runs. A named job's own history is trusted from its first run;
 * coarser groups need {@value #COARSE_MIN_RUNS}.
 */
public enum HistoryLevel {
    USER_NAME(1, f -> f.hasName() ? f.user() + "\u0000" + f.name() : null),
    USER_TEMPLATE(1, f -> f.hasName() ? f.user() + "\u0000" + f.template() : null),
    USER_FIRST_TOKEN(HistoryLevel.COARSE_MIN_RUNS, f -> f.hasName() ? f.user() + "\u0000" + f.firstToken() : null),
    TENANT_TEMPLATE(HistoryLevel.COARSE_MIN_RUNS, f -> f.hasName() ? f.tenant() + "\u0000" + f.template() : null),
    USER_GPUS(HistoryLevel.COARSE_MIN_RUNS, f -> f.user() + "\u0000" + f.gpus()),
    USER(HistoryLevel.COARSE_MIN_RUNS, JobFeatures::user),
    TENANT_GPUS(HistoryLevel.COARSE_MIN_RUNS, f -> f.tenant() + "\u0000" + f.gpus()),
    TENANT(HistoryLevel.COARSE_MIN_RUNS, JobFeatures::tenant),
    GPUS(HistoryLevel.COARSE_MIN_RUNS, f -> Double.toString(f.gpus()));

    static final int COARSE_MIN_RUNS = 3;

    private final int minRuns;
    private final Function<JobFeatures, String> key;

    HistoryLevel(int minRuns, Function<JobFeatures, String> key) {
        this.minRuns = minRuns;
        this.key = key;
    }

    public int minRuns() {
        return minRuns;
    }

    /** This level's group of the job, or null when the level does not apply (an unnamed job has no name groups). */
    String key(JobFeatures f) {
        String k = key.apply(f);
        return k == null ? null : ordinal() + "\u0000" + k;
    }
}
