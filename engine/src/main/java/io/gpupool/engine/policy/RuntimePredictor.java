package io.gpupool.engine.policy;

import io.gpupool.model.JobSpec;

/** Predicts how long a job will run, learning from completed jobs. */
public interface RuntimePredictor {
    String name();

    /** Predicted run time in ms (> 0). */
    long predictMs(JobSpec job);

    /** A job finished after running {@code runMs} in all. */
    void observe(JobSpec job, long runMs);

    /**
     * A live view of one job's prediction, asked for once per job and then read every round: {@link Prediction#ms()}
     * must equal {@link #predictMs} of the job at every moment. A predictor whose prediction is a lookup it can resolve
     * once (the job's history groups) returns a view that only reads; the default asks {@link #predictMs} each time.
     */
    default Prediction track(JobSpec job) {
        return () -> predictMs(job);
    }

    /**
     * A number that changes whenever any prediction may have changed (each {@link #observe} that learned), or
     * {@link #UNKNOWN_VERSION} when the predictor cannot tell (predictions may change at any call, e.g. a model
     * trained in the background): the round then recomputes what it derived from predictions instead of reusing it.
     */
    default long version() {
        return UNKNOWN_VERSION;
    }

    long UNKNOWN_VERSION = Long.MIN_VALUE;

    /** One job's current prediction ({@link #track}). */
    @FunctionalInterface
    interface Prediction {
        long ms();

        /**
         * A number that changes whenever {@link #ms()} may have changed, or {@link #UNKNOWN_VERSION}: finer than the
         * predictor's {@link RuntimePredictor#version()}, so that a prediction read once stays valid while only other
         * jobs' histories learn (a completion changes the predictions of the jobs of its own groups). Jobs whose answer
         * is always the same may share one view.
         */
        default long version() {
            return UNKNOWN_VERSION;
        }
    }
}
