package io.gpupool.engine.policy;

import io.gpupool.model.JobSpec;

/** Predicts how long a job will run, learning from completed jobs. */
public interface RuntimePredictor {
    String name();

    /** Predicted run time in ms (> 0). */
    long predictMs(JobSpec job);

    /** A job finished after running {@code runMs} in all. */
    void observe(JobSpec job, long runMs);
}
