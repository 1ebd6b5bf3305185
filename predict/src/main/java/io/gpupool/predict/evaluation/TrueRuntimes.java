package io.gpupool.predict.evaluation;

import io.gpupool.engine.policy.RuntimePredictor;
import io.gpupool.model.JobSpec;

import java.util.Map;

/** The reference "predictor" that knows every job's true run time: what qssf could do with perfect predictions. */
final class TrueRuntimes implements RuntimePredictor {
    static final String NAME = "true-runtimes";
    private final Map<String, Long> runMs;

    TrueRuntimes(Map<String, Long> runMs) {
        this.runMs = runMs;
    }

    @Override public String name() {
        return NAME;
    }

    @Override
    public long predictMs(JobSpec job) {
        return runMs.get(job.id());
    }

    @Override
    public void observe(JobSpec job, long runMs) {
        // knows everything already
    }
}
