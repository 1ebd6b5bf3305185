package io.gpupool.predict.runtime;

import io.gpupool.model.JobSpec;

/** A job of the past and how long it ran: what predictors learn from and are scored on. */
public record FinishedJob(JobSpec spec, long runMs) {
    public FinishedJob {
        if (runMs <= 0) throw new IllegalArgumentException("job " + spec.id() + ": run time must be > 0");
    }
}
