package io.gpupool.server.history;

import io.gpupool.model.GpuCatalog;
import io.gpupool.model.SpecException;
import io.gpupool.server.core.ArrayTask;
import io.gpupool.server.core.ServiceException;
import io.gpupool.server.core.StoredSpec;
import io.gpupool.server.usage.UsageWindow;
import io.gpupool.sim.history.HistoryCsv;
import io.gpupool.sim.history.RecordedJob;
import io.gpupool.store.UsageGrantRow;
import io.gpupool.store.UsageStore;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The pool's finished jobs submitted in a window, as the simulator replays them (docs/architecture.md, "History as a
 * trace"): each job's request as the engine took it, and every attempt's GPUs from grant to release (usage_grants).
 * Times count from {@code originMs}, the first submission of the window's jobs. Jobs that never started (cancelled
 * while queued, a dependency that failed) and jobs still active are left out and counted.
 *
 * @param neverStarted finished jobs of the window that never held a GPU
 * @param unfinished   jobs of the window still queued or running
 * @param unreadable   finished jobs whose stored record does not make a replayable job (their grants do not match their
 *                     request); none in a consistent store
 */
public record History(UsageWindow window, String tenant, long originMs, List<RecordedJob> jobs, long neverStarted, long unfinished, long unreadable) {

    /**
     * Reads the window's history.
     *
     * @throws ServiceException (422) when the window holds more than {@code limit} finished jobs
     */
    public static History read(UsageStore store, UsageWindow w, String tenant, int limit, GpuCatalog catalog) {
        UsageStore.FinishedJobs found = store.finishedJobs(w.sinceMs(), w.untilMs(), tenant, limit);
        if (found.more()) {
            throw ServiceException.invalid("since", "the window holds more than " + limit + " finished jobs; narrow since and until");
        }
        long origin = found.jobs().isEmpty() ? w.sinceMs() : found.jobs().getFirst().submittedMs();
        List<RecordedJob> jobs = new ArrayList<>();
        long neverStarted = 0, unreadable = 0;
        for (UsageStore.FinishedJob j : found.jobs()) {
            if (j.grants().isEmpty()) {
                neverStarted++;
                continue;
            }
            try {
                jobs.add(recorded(j, origin, catalog));
            } catch (SpecException | IllegalStateException e) {
                unreadable++;
            }
        }
        return new History(w, tenant, origin, jobs, neverStarted, found.unfinished(), unreadable);
    }

    /** One job: its request as the engine saw it, its attempts as runs (times from the origin). */
    private static RecordedJob recorded(UsageStore.FinishedJob j, long origin, GpuCatalog catalog) {
        StoredSpec stored = StoredSpec.read(j.spec(), catalog);
        Map<Integer, List<UsageGrantRow>> byAttempt = new TreeMap<>();
        for (UsageGrantRow g : j.grants()) byAttempt.computeIfAbsent(g.attempt(), k -> new ArrayList<>()).add(g);
        List<RecordedJob.Run> runs = new ArrayList<>();
        for (List<UsageGrantRow> attempt : byAttempt.values()) {
            long start = Long.MAX_VALUE, end = Long.MIN_VALUE;
            Map<String, List<Integer>> nodes = new LinkedHashMap<>();
            for (UsageGrantRow g : attempt) {
                start = Math.min(start, g.startedMs());
                // a grant a crash left open ended with its job at the latest
                end = Math.max(end, g.endedMs() != null ? g.endedMs() : j.endedMs());
                nodes.computeIfAbsent(g.node(), k -> new ArrayList<>()).add(g.gpu());
            }
            List<RecordedJob.NodeGpus> gpus = new ArrayList<>();
            nodes.forEach((node, list) -> gpus.add(new RecordedJob.NodeGpus(node, list)));
            runs.add(new RecordedJob.Run(start - origin, end - origin, gpus));
        }
        ArrayTask task = stored.array();
        return RecordedJob.of(stored.request().toJobSpec(j.jobId(), j.submittedMs() - origin), task == null ? null : task.arrayId(),
                task == null ? 0 : task.cap(), j.state(), runs);
    }

    /** The history as a gpupool trace CSV with its record columns. */
    public String csv() {
        return HistoryCsv.write(jobs, originMs);
    }

    /** What was left out, and why, for the answer's {@code leftOut}. */
    public Map<String, Long> leftOut() {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("unfinished", unfinished);
        m.put("neverStarted", neverStarted);
        m.put("unreadable", unreadable);
        return m;
    }
}
