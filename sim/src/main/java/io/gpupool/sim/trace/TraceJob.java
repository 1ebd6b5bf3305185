package io.gpupool.sim.trace;

import io.gpupool.model.JobSpec;

/** A job of a trace: what was submitted, and how long it really ran (known only to the simulator). */
public record TraceJob(JobSpec spec, long durationMs) {
    public TraceJob {
        if (durationMs <= 0) throw new io.gpupool.model.SpecException("job " + spec.id(), "duration", "must be > 0");
    }
}
