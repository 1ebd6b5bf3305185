package io.gpupool.engine.policy;

/** True run times, known only in simulation: what the clairvoyant reference policy orders by. */
@FunctionalInterface
public interface RuntimeOracle {
    /** The job's total run time in ms; the same every time it is asked (the engine asks once per job). */
    long runtimeMs(String jobId);
}
