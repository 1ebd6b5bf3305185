package io.gpupool.predict.runtime;

import io.gpupool.engine.policy.RuntimePredictor;
import io.gpupool.model.JobSpec;

/**
 * Takes a job's own run-time estimate when it gives one and asks the model otherwise: how qssf and EASY
 * backfill use a predictor. The model still learns from every job (and sees the estimate as a feature).
 */
public final class EstimateFirstPredictor implements RuntimePredictor {
    private final RuntimePredictor model;

    public EstimateFirstPredictor(RuntimePredictor model) {
        this.model = model;
    }

    /** The wrapped model (what a service saves). */
    public RuntimePredictor model() {
        return model;
    }

    @Override public String name() {
        return model.name();
    }

    @Override
    public long predictMs(JobSpec job) {
        return job.runtimeEstimateMs().isPresent() ? job.runtimeEstimateMs().getAsLong() : model.predictMs(job);
    }

    @Override
    public void observe(JobSpec job, long runMs) {
        model.observe(job, runMs);
    }
}
