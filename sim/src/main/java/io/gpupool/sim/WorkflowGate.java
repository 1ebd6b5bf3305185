package io.gpupool.sim;

import io.gpupool.engine.Scheduler;
import io.gpupool.sim.trace.TraceJob;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A trace's arrays and dependencies in a replay: an array task joins its array's cap in the engine, and a job held
 * until the jobs it depends on completed (afterok). Only jobs of a trace with workflow columns are tracked, so a
 * trace without them replays exactly as before. In a replay every job that starts completes, so a dependency on a job
 * that was refused, or not submitted before the job, can never be met: the job is refused with that reason.
 */
final class WorkflowGate {
    private final Map<String, List<String>> waitersOf = new HashMap<>();   // job -> jobs waiting for it to complete
    private final Map<String, Integer> unmet = new HashMap<>();            // waiting job -> jobs it still waits for
    private final Set<String> completed = new HashSet<>();                 // completed jobs of a trace with workflows

    /** Why the job can never run here, or null. {@code active}: jobs queued or running. */
    String refusal(TraceJob job, Set<String> active) {
        if (job.workflow() == null) return null;
        for (String d : job.workflow().afterOk()) {
            if (!completed.contains(d) && !active.contains(d)) {
                return "dependency afterok:" + d + " can never be met: " + d + " was not queued, running or completed before it";
            }
        }
        return null;
    }

    /** The job was queued: its cap, and a hold until what it depends on completed. */
    void queued(TraceJob job, Scheduler s) {
        TraceJob.Workflow w = job.workflow();
        if (w == null) return;
        String id = job.spec().id();
        if (w.arrayCap() > 0) s.capConcurrency(id, w.arrayId(), w.arrayCap());
        List<String> waits = new ArrayList<>();
        for (String d : w.afterOk()) {
            if (completed.contains(d)) continue;
            waitersOf.computeIfAbsent(d, k -> new ArrayList<>()).add(id);
            waits.add(d);
        }
        if (!waits.isEmpty()) {
            unmet.put(id, waits.size());
            s.hold(id, "waits for dependency afterok:" + String.join(":", waits));
        }
    }

    /** The job completed: jobs waiting for nothing else may start. */
    void completed(TraceJob job, Scheduler s) {
        if (job.workflow() == null) return;
        String id = job.spec().id();
        completed.add(id);
        List<String> waiters = waitersOf.remove(id);
        if (waiters == null) return;
        for (String w : waiters) {
            if (unmet.merge(w, -1, Integer::sum) == 0) {
                unmet.remove(w);
                s.releaseHold(w);
            }
        }
    }
}
