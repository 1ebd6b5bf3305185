package io.gpupool.sim.history;

import io.gpupool.model.JobSpec;
import io.gpupool.model.SpecException;
import io.gpupool.sim.trace.TraceJob;

import java.util.List;

/**
 * A finished job of a pool's history: the job as a replay sees it (what was submitted, and how long its last run held
 * its GPUs) and what really happened to it on the service: its end state and every run (attempt) with its times and
 * the GPUs it held. The replay of the record itself ({@link RecordedReplay}) and the trace's {@code recorded_*}
 * columns ({@link HistoryCsv}) come from here.
 *
 * @param state the job's end state on the service (SUCCEEDED, FAILED, CANCELLED, TIMEOUT, ...)
 * @param runs  its runs in order, each after the one before, the first at or after its submission
 */
public record RecordedJob(TraceJob job, String state, List<Run> runs) {
    public RecordedJob {
        runs = List.copyOf(runs);
        String id = job.spec().id();
        if (runs.isEmpty()) throw new SpecException("job " + id, "recorded_runs", "a finished job of the history ran at least once");
        long after = job.spec().submitTimeMs();
        for (int i = 0; i < runs.size(); i++) {
            Run r = runs.get(i);
            if (r.startMs() < after) {
                throw new SpecException("job " + id, "recorded_runs", "run " + (i + 1) + " starts before " + (i == 0 ? "the job's submission" : "run " + i + " ended"));
            }
            int gpus = r.gpus().stream().mapToInt(n -> n.gpus().size()).sum();
            if (gpus != job.spec().totalGpus()) {
                throw new SpecException("job " + id, "recorded_runs", "run " + (i + 1) + " holds " + gpus + " GPUs, the job asks for " + job.spec().totalGpus());
            }
            after = r.endMs();
        }
    }

    /**
     * One run of a job: from the server's grant of its GPUs to their release (so the agent's start and the report of
     * the end are inside it).
     */
    public record Run(long startMs, long endMs, List<NodeGpus> gpus) {
        public Run {
            gpus = List.copyOf(gpus);
            if (endMs < startMs) throw new SpecException("run", "recorded_runs", "ends (" + endMs + ") before it starts (" + startMs + ")");
        }

        public long heldMs() { return endMs - startMs; }
    }

    /** The GPUs (indices) a run held on one node. */
    public record NodeGpus(String node, List<Integer> gpus) {
        public NodeGpus {
            gpus = List.copyOf(gpus);
        }
    }

    /**
     * A job of the history as the replay takes it: it runs as long as its last run held its GPUs (a run cut short by a
     * lost node, a requeue or a preemption started again from the beginning on the service), and it keeps its array
     * (a trace with array columns gives every job a workflow, so a job read back from the CSV equals this one).
     */
    public static RecordedJob of(JobSpec spec, String arrayId, int arrayCap, String state, List<Run> runs) {
        long ran = runs.isEmpty() ? 1 : Math.max(1, runs.getLast().heldMs());
        return new RecordedJob(new TraceJob(spec, ran, new TraceJob.Workflow(arrayId, arrayCap, List.of())), state, runs);
    }

    public JobSpec spec() { return job.spec(); }

    public long firstStartMs() { return runs.getFirst().startMs(); }

    public long endMs() { return runs.getLast().endMs(); }

    /** Time queued: from submission to the first run, and between runs (requeued). */
    public long waitMs() {
        long wait = firstStartMs() - spec().submitTimeMs();
        for (int i = 1; i < runs.size(); i++) wait += runs.get(i).startMs() - runs.get(i - 1).endMs();
        return wait;
    }

    public long jctMs() { return endMs() - spec().submitTimeMs(); }

    public boolean timedOut() { return state.equals("TIMEOUT"); }
}
