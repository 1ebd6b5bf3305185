package io.gpupool.predict.evaluation;

import io.gpupool.engine.policy.RuntimePredictor;
import io.gpupool.model.JobSpec;

import java.util.HashMap;
import java.util.Map;

/** Passes everything to a predictor and remembers the first prediction each job got: what the scheduler saw on arrival. */
final class RecordingPredictor implements RuntimePredictor {
    private final RuntimePredictor model;
    private final Map<String, Long> first = new HashMap<>();

    RecordingPredictor(RuntimePredictor model) {
        this.model = model;
    }

    RuntimePredictor model() {
        return model;
    }

    /** The first prediction of the job, or -1 when it was never asked about (it started at once under a policy that does not ask). */
    long firstPredictionMs(String jobId) {
        return first.getOrDefault(jobId, -1L);
    }

    @Override public String name() {
        return model.name();
    }

    @Override
    public long predictMs(JobSpec job) {
        long ms = model.predictMs(job);
        first.putIfAbsent(job.id(), ms);
        return ms;
    }

    @Override
    public void observe(JobSpec job, long runMs) {
        model.observe(job, runMs);
    }
}
