package io.gpupool.predict.runtime;

import io.gpupool.engine.policy.RuntimePredictor;

import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;

/**
 * A run-time predictor whose learning survives a restart: {@link #save} writes it, {@link Predictors#load}
 * reads any saved predictor back. Like the engine that calls it, a predictor is not thread-safe.
 */
public interface PersistentPredictor extends RuntimePredictor {
    /** Writes what the predictor has learned, behind a header naming its kind and format version. */
    default void save(OutputStream out) throws IOException {
        Predictors.save(this, out);
    }

    /**
     * Runs {@code learning} (which observes many past jobs, e.g. a {@link HistoryReplay}) and trains once at the
     * end rather than on the predictor's usual schedule. Predictors that learn as they observe just run it.
     */
    default void learnInBatch(Runnable learning) {
        learning.run();
    }

    /** The predictor's own state, after the header. */
    void writeState(DataOutputStream out) throws IOException;
}
