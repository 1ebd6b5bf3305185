package io.gpupool.sim;

import io.gpupool.engine.JobState;
import io.gpupool.engine.JobStatus;
import io.gpupool.engine.RoundResult;
import io.gpupool.engine.Scheduler;
import io.gpupool.engine.SchedulerConfig;
import io.gpupool.engine.SubmitResult;
import io.gpupool.engine.batch.BatchPlacer;
import io.gpupool.model.ClusterSpec;
import io.gpupool.sim.metrics.JobOutcome;
import io.gpupool.sim.metrics.SimulationResult;
import io.gpupool.sim.trace.TraceJob;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;

/**
 * Discrete-event replay of a trace through the engine's {@link Scheduler}, on a virtual clock.
 * At one instant, completions are processed first, then arrivals (in trace order), then one
 * scheduling round. Preempted jobs lose their pending completion; they finish later with their
 * attained service kept. Deterministic: the same trace and configuration give the same result.
 */
public final class Simulator {
    private final ClusterSpec cluster;
    private final SchedulerConfig config;
    private BatchPlacer batchPlacer;

    public Simulator(ClusterSpec cluster, SchedulerConfig config) {
        this.cluster = cluster;
        this.config = config;
    }

    /** Batch mode: each round the placer starts a batch from the head of the queue first (null = off). */
    public Simulator batchPlacer(BatchPlacer placer) {
        this.batchPlacer = placer;
        return this;
    }

    /** A completion scheduled for a run; stale when the job was preempted since (version changed). */
    private record Completion(long atMs, long seq, String jobId, int version) {}

    public SimulationResult run(List<TraceJob> trace) {
        List<TraceJob> arrivals = new ArrayList<>(trace);
        // stable: jobs arriving at the same instant keep trace order
        arrivals.sort(Comparator.comparingLong(t -> t.spec().submitTimeMs()));
        Map<String, Long> durations = new HashMap<>();
        for (TraceJob t : arrivals) durations.put(t.spec().id(), t.durationMs());
        Scheduler scheduler = new Scheduler(cluster, config, durations::get);
        scheduler.setBatchPlacer(batchPlacer);
        PriorityQueue<Completion> completions = new PriorityQueue<>(
                Comparator.comparingLong(Completion::atMs).thenComparingLong(Completion::seq));
        Map<String, Integer> version = new HashMap<>();
        List<String> rejected = new ArrayList<>();
        Map<String, String> rejectReasons = new HashMap<>();
        long completionSeq = 0;
        int next = 0;
        int rounds = 0;
        long preemptions = 0;
        long now = 0;
        List<long[]> timeline = new ArrayList<>();   // [t, queued, usedMilli]
        while (true) {
            long tArrival = next < arrivals.size() ? arrivals.get(next).spec().submitTimeMs() : Long.MAX_VALUE;
            while (!completions.isEmpty() && version.get(completions.peek().jobId()) != completions.peek().version()) completions.poll();
            long tDone = completions.isEmpty() ? Long.MAX_VALUE : completions.peek().atMs();
            long tPolicy = scheduler.nextReevaluationMs(now).orElse(Long.MAX_VALUE);
            long t = Math.min(tArrival, Math.min(tDone, tPolicy));
            if (t == Long.MAX_VALUE) break;
            now = Math.max(now, t);
            while (!completions.isEmpty() && completions.peek().atMs() <= now) {
                Completion c = completions.poll();
                if (version.get(c.jobId()) != c.version()) continue;
                scheduler.complete(c.jobId(), now);
            }
            while (next < arrivals.size() && arrivals.get(next).spec().submitTimeMs() <= now) {
                TraceJob tj = arrivals.get(next++);
                SubmitResult r = scheduler.submit(tj.spec(), now);
                if (!r.accepted()) {
                    rejected.add(tj.spec().id());
                    rejectReasons.put(tj.spec().id(), r.reason());
                }
            }
            RoundResult round = scheduler.schedule(now);
            rounds++;
            preemptions += round.preempted().size();
            for (String id : round.preempted()) version.merge(id, 1, Integer::sum);
            for (String id : round.started()) {
                JobState j = scheduler.job(id);
                int v = version.merge(id, 1, Integer::sum);
                long remaining = durations.get(id) - j.attainedMs(now);
                completions.add(new Completion(now + Math.max(1, remaining), completionSeq++, id, v));
            }
            timeline.add(new long[] {now, scheduler.pendingJobs().size(), scheduler.cluster().usedMilli()});
            if (next >= arrivals.size() && completions.isEmpty() && scheduler.runningJobs().isEmpty()) {
                if (!scheduler.pendingJobs().isEmpty()) {
                    // nothing runs and nothing will arrive: what is left can never start (quota, non-preemptible rules)
                    for (JobState j : scheduler.pendingJobs()) rejectReasons.put(j.id(), "never started: " + j.waitReason());
                }
                break;
            }
        }
        List<JobOutcome> outcomes = new ArrayList<>();
        for (TraceJob t : arrivals) {
            JobState j = scheduler.job(t.spec().id());
            if (j == null || j.status() != JobStatus.COMPLETED) continue;
            outcomes.add(new JobOutcome(t.spec().id(), t.spec().tenant(), t.spec().submitTimeMs(), j.firstStartMs(), j.endMs(),
                    t.durationMs(), j.gpuUnits(), j.waitedMs(j.endMs()), j.preemptions()));
        }
        List<String> unfinished = new ArrayList<>();
        for (JobState j : scheduler.pendingJobs()) unfinished.add(j.id());
        String policy = config.policy() + (batchPlacer == null ? "" : "+batch:" + batchPlacer.name());
        return new SimulationResult(policy, config.placement().label(), cluster.totalGpus(), outcomes,
                rejected, unfinished, rejectReasons, preemptions, rounds, timeline, config.tenants());
    }
}
