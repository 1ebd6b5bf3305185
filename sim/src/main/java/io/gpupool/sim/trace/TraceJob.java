package io.gpupool.sim.trace;

import io.gpupool.model.JobSpec;

import java.util.List;

/**
 * A job of a trace: what was submitted, and how long it really ran (known only to the simulator).
 *
 * @param workflow its array and dependencies, where the trace has those columns (docs/contracts.md); null otherwise
 */
public record TraceJob(JobSpec spec, long durationMs, Workflow workflow) {
    public TraceJob {
        if (durationMs <= 0) throw new io.gpupool.model.SpecException("job " + spec.id(), "duration", "must be > 0");
    }

    public TraceJob(JobSpec spec, long durationMs) {
        this(spec, durationMs, null);
    }

    /**
     * A job's place in a workflow, from a trace's optional columns.
     *
     * @param arrayId  the array it is a task of (null: none)
     * @param arrayCap the most tasks of its array running at once (0: no cap)
     * @param afterOk  jobs that must have completed before it may start (Slurm's afterok; each submitted before it)
     */
    public record Workflow(String arrayId, int arrayCap, List<String> afterOk) {
        public Workflow {
            afterOk = List.copyOf(afterOk);
        }
    }
}
