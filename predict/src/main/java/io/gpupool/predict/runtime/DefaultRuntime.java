package io.gpupool.predict.runtime;

import io.gpupool.engine.policy.RuntimePredictor;
import io.gpupool.model.JobSpec;

/**
 * No prediction: every job is assumed to run the configured default time ({@code --predictor none}, the
 * baseline a learned predictor is compared with). Learns nothing.
 */
public final class DefaultRuntime implements RuntimePredictor {
    public static final String NAME = "none";
    private final long defaultMs;

    public DefaultRuntime(long defaultMs) {
        if (defaultMs <= 0) throw new IllegalArgumentException("default run time must be > 0");
        this.defaultMs = defaultMs;
    }

    @Override public String name() { return NAME; }

    @Override public long predictMs(JobSpec job) { return defaultMs; }

    @Override public void observe(JobSpec job, long runMs) {
        // nothing to learn
    }
}
