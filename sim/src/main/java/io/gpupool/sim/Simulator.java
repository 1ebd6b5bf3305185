package io.gpupool.sim;

import io.gpupool.engine.JobState;
import io.gpupool.engine.RoundResult;
import io.gpupool.engine.Scheduler;
import io.gpupool.engine.SchedulerConfig;
import io.gpupool.engine.SubmitResult;
import io.gpupool.engine.policy.RuntimePredictor;
import io.gpupool.engine.state.GpuGrant;
import io.gpupool.engine.batch.BatchPlacer;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.JobSpec;
import io.gpupool.sim.energy.EnergyModel;
import io.gpupool.sim.energy.PowerDown;
import io.gpupool.model.SpecException;
import io.gpupool.sim.metrics.JobOutcome;
import io.gpupool.sim.trace.ReservationsFile;
import io.gpupool.sim.metrics.SimulationRecorder;
import io.gpupool.sim.metrics.SimulationResult;
import io.gpupool.sim.trace.Trace;
import io.gpupool.sim.trace.TraceJob;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Discrete-event replay of a trace through the engine's {@link Scheduler} on a virtual clock; the same
 * scheduler class the service runs, so ordering and placement are the engine's, never re-implemented here.
 *
 * <p>Per instant: completions first, then arrivals (in trace order), then one scheduling round; a policy's
 * {@link Scheduler#nextReevaluationMs} adds rounds at instants with no event (LAS demotions). Preempted
 * jobs lose their pending completion (a version counter makes it stale) and get a new one when they
 * resume, with their attained service kept. Deterministic: the same trace and configuration give the same
 * result.
 *
 * <p>Time limits: a run ends at the earlier of the job's remaining duration and its time limit counted from the run's
 * start (each run of a preempted job gets the whole limit again, as each attempt does on the service); a run the limit
 * cuts short ends the job as timed out ({@link JobOutcome#timedOut}). The engine sees the limit as the upper bound of
 * the job's run time (backfill, prediction), and the oracle of a limited job answers at most the limit.
 *
 * <p>Streaming: the trace is pulled one job at a time and a job is forgotten by the engine as soon as it
 * completes, so memory follows the jobs queued or running, not the trace length.
 */
public final class Simulator {
    /** Progress of a replay: jobs finished (completed or refused) out of the trace's jobs. */
    @FunctionalInterface
    public interface Progress {
        void update(long jobsDone, long jobsTotal);
    }

    /** Default width of the fairness windows (see {@code FairnessWindows}). */
    public static final long DEFAULT_FAIRNESS_WINDOW_MS = 3_600_000;

    private final ClusterSpec cluster;
    private final SchedulerConfig config;
    private long fairnessWindowMs = DEFAULT_FAIRNESS_WINDOW_MS;
    private Consumer<JobOutcome> onJobDone = o -> {};
    private Progress progress = (d, t) -> {};
    private Supplier<? extends RuntimePredictor> predictor;
    private BatchPlacer batchPlacer;
    private EnergyModel energy = EnergyModel.DEFAULT;
    private PowerDown powerDown;
    private List<ReservationsFile.Entry> reservations = List.of();

    public Simulator(ClusterSpec cluster, SchedulerConfig config) {
        this.cluster = cluster;
        this.config = config;
    }

    public Simulator fairnessWindowMs(long ms) {
        if (ms <= 0) throw new IllegalArgumentException("fairness window must be > 0");
        this.fairnessWindowMs = ms;
        return this;
    }

    /** Called with every completed job's outcome (tests, per-job exports). */
    public Simulator onJobDone(Consumer<JobOutcome> listener) {
        this.onJobDone = listener;
        return this;
    }

    public Simulator progress(Progress p) {
        this.progress = p;
        return this;
    }

    /** The run-time predictor of each replay's scheduler (qssf, backfill), a new one per replay; default: the engine's. */
    public Simulator predictor(Supplier<? extends RuntimePredictor> p) {
        this.predictor = p;
        return this;
    }

    /** Batch mode: each round the placer starts a batch from the head of the queue first (null = off). */
    public Simulator batchPlacer(BatchPlacer placer) {
        this.batchPlacer = placer;
        return this;
    }

    /** What a GPU draws (the assumption behind the energy figures); default {@link EnergyModel#DEFAULT}. */
    public Simulator energy(EnergyModel model) {
        this.energy = java.util.Objects.requireNonNull(model);
        return this;
    }

    /** Powers idle nodes down and up on demand ({@link NodePower}); null (the default): every node stays on. */
    public Simulator powerDown(PowerDown params) {
        this.powerDown = params;
        return this;
    }

    /**
     * Advance reservations the replay makes at time 0, before any job arrives (the engine's rules: only the tenant's jobs
     * inside a window, only jobs whose time limit ends before it before it). One the engine refuses stops the replay
     * with the file's line and the reason.
     */
    public Simulator reservations(List<ReservationsFile.Entry> entries) {
        this.reservations = List.copyOf(entries);
        return this;
    }

    /** A job the replay is tracking: what it really runs for, and the nodes of its current run. */
    private static final class Active {
        final TraceJob job;
        int version;
        int[] nodes = new int[0];

        Active(TraceJob job) { this.job = job; }
    }

    /**
     * A completion scheduled for a run ({@code timeout}: the time limit ends it); stale when the job was preempted since
     * (its version moved on). It holds its job's entry, so the heap's head is tested without a map look-up; an entry
     * leaves the map only when its job ends or is refused, and then no completion of its current version is pending.
     */
    private record Completion(long atMs, long seq, Active job, int version, boolean timeout) {
        String jobId() { return job.job.spec().id(); }
        boolean stale() { return job.version != version; }
    }

    public SimulationResult run(List<TraceJob> jobs) {
        return run(Trace.of("trace", jobs));
    }

    public SimulationResult run(Trace trace) {
        try (Trace.Cursor cursor = trace.open()) {
            Replay replay = new Replay(trace, cursor);
            // one call per instant: the JIT compiles the instant's work as methods, not as one on-stack replacement of
            // this loop per replay (each policy's first deoptimization recompiled the whole inlined loop)
            while (replay.instant()) { }
            return replay.finish();
        }
    }

    /** One replay's state: the engine, the recorder, the pending completions and the trace's next job. */
    private final class Replay {
        final Trace trace;
        final Trace.Cursor cursor;
        final Map<String, Active> active = new HashMap<>();
        final Scheduler scheduler;
        final SimulationRecorder rec;
        final NodePower power;
        final WorkflowGate workflows = new WorkflowGate();
        // by time, then by scheduling order (one comparison, no key extractors: the heap compares at every event)
        final PriorityQueue<Completion> completions = new PriorityQueue<>((a, b) ->
                a.atMs() != b.atMs() ? Long.compare(a.atMs(), b.atMs()) : Long.compare(a.seq(), b.seq()));
        final long total;
        long completionSeq = 0, rounds = 0, preemptions = 0, finished = 0, lastProgress = 0;
        long now = 0;
        TraceJob next;

        Replay(Trace trace, Trace.Cursor cursor) {
            this.trace = trace;
            this.cursor = cursor;
            scheduler = new Scheduler(cluster, config, id -> ranAtMost(active.get(id).job));
            if (predictor != null) scheduler.setPredictor(predictor.get());
            scheduler.setBatchPlacer(batchPlacer);
            for (ReservationsFile.Entry e : reservations) {
                try {
                    scheduler.reserve(e.request(), 0);
                } catch (SpecException refused) {
                    throw new SpecException(e.where(), refused.field(), refused.rule());
                }
            }
            rec = new SimulationRecorder(scheduler.cluster(), config.tenants(), fairnessWindowMs, energy);
            if (powerDown != null) {
                power = new NodePower(scheduler, powerDown, rec.power());
                rec.powerDown(powerDown.describe());
            } else {
                power = null;
            }
            total = trace.stats().jobs();
            next = cursor.hasNext() ? cursor.next() : null;
        }

        /** Moves to the next instant with an event and plays it; false when nothing is left to happen. */
        boolean instant() {
            while (!completions.isEmpty() && completions.peek().stale()) completions.poll();
            long tArrival = next != null ? next.spec().submitTimeMs() : Long.MAX_VALUE;
            long tDone = completions.isEmpty() ? Long.MAX_VALUE : completions.peek().atMs();
            long tPolicy = scheduler.nextReevaluationMs(now).orElse(Long.MAX_VALUE);
            long tPower = power == null ? Long.MAX_VALUE : power.nextEventMs(now);
            long t = Math.min(Math.min(tArrival, tPower), Math.min(tDone, tPolicy));
            if (t == Long.MAX_VALUE) return false;
            now = Math.max(now, t);
            rec.advanceTo(now);
            completeDue();
            admitArrivals();
            if (power != null) power.beforeRound(now);
            RoundResult round = scheduler.schedule(now);
            rounds++;
            applyRound(round);
            if (power != null) power.afterRound(now);
            rec.instantDone();
            if (finished - lastProgress >= 1000) {
                progress.update(finished, total);
                lastProgress = finished;
            }
            return !(next == null && completions.isEmpty() && scheduler.runningJobs().isEmpty()
                    && scheduler.nextReevaluationMs(now).isEmpty() && (power == null || !power.waking()));
        }

        /** The runs that end now: the engine completes them and the recorder and workflows learn their outcome. */
        void completeDue() {
            while (!completions.isEmpty() && completions.peek().atMs() <= now) {
                Completion c = completions.poll();
                if (c.stale()) continue;
                Active a = c.job();
                // what it ran: all of its duration, or up to the limit that stopped it (over all its runs)
                long ranMs = c.timeout() ? scheduler.job(c.jobId()).attainedMs(now) : a.job.durationMs();
                JobState j = scheduler.complete(c.jobId(), now);
                JobSpec s = a.job.spec();
                JobOutcome o = new JobOutcome(s.id(), s.tenant(), s.submitTimeMs(), j.firstStartMs(), j.endMs(),
                        ranMs, j.gpuUnits(), j.waitedMs(j.endMs()), j.preemptions(), c.timeout());
                rec.completed(s, o, a.nodes);
                workflows.completed(a.job, scheduler);
                onJobDone.accept(o);
                active.remove(c.jobId());
                scheduler.forget(c.jobId());
                finished++;
            }
        }

        /** The trace's jobs submitted by now, in trace order: queued, or refused with the reason. */
        void admitArrivals() {
            while (next != null && next.spec().submitTimeMs() <= now) {
                JobSpec s = next.spec();
                String never = workflows.refusal(next, active.keySet());
                // before submit: the oracle may be asked at once; a job of the same id still tracked keeps its entry
                // (the scheduler refuses the newcomer), so its completion still ends it
                boolean tracked = active.putIfAbsent(s.id(), new Active(next)) == null;
                SubmitResult r = never == null ? scheduler.submit(s, now) : null;
                if (r != null && r.accepted()) {
                    rec.submitted(s);
                    workflows.queued(next, scheduler);
                } else if (r == null) {
                    if (tracked) active.remove(s.id());
                    rec.rejected(s, never);
                    finished++;
                } else {
                    if (tracked) active.remove(s.id());
                    rec.rejected(s, r.reason());
                    scheduler.forget(s.id());
                    finished++;
                }
                next = cursor.hasNext() ? cursor.next() : null;
            }
        }

        /** The round's preemptions make their pending completions stale; each start schedules its completion. */
        void applyRound(RoundResult round) {
            // indexed loops over the round's lists: no iterator per instant
            List<String> preempted = round.preempted(), started = round.started();
            preemptions += preempted.size();
            for (int k = 0; k < preempted.size(); k++) {
                Active a = active.get(preempted.get(k));
                a.version++;
                rec.preempted(a.job.spec(), a.nodes);
            }
            for (int k = 0; k < started.size(); k++) {
                String id = started.get(k);
                Active a = active.get(id);
                JobState j = scheduler.job(id);
                a.version++;
                a.nodes = nodesOf(j);
                rec.started(a.job.spec(), a.nodes);
                rec.runsOn(a.job.spec(), j.allocation().replicas());
                long remaining = Math.max(1, a.job.durationMs() - j.attainedMs(now));
                long limit = a.job.spec().timeLimitMs().orElse(Long.MAX_VALUE);
                completions.add(new Completion(now + Math.min(remaining, limit), completionSeq++, a, a.version, limit < remaining));
            }
        }

        /** The result; what is still queued can never start (nothing runs and nothing will arrive: quota, policy rules). */
        SimulationResult finish() {
            Map<String, String> unfinished = new LinkedHashMap<>();
            for (JobState j : scheduler.pendingJobs()) {
                if (unfinished.size() < 20) unfinished.put(j.id(), "never started: " + j.waitReason());
            }
            progress.update(total, total);
            return rec.finish(config.policy() + (batchPlacer == null ? "" : "+batch:" + batchPlacer.name()), config.placement().label(),
                    trace.label(), scheduler.pendingJobs().size(), unfinished, preemptions, rounds);
        }
    }

    /** What the job runs for in one go: its duration, or its time limit when that is shorter. */
    private static long ranAtMost(TraceJob job) {
        return Math.min(job.durationMs(), job.spec().timeLimitMs().orElse(Long.MAX_VALUE));
    }


    /** The node of each replica (a replica sits on one node). */
    private static int[] nodesOf(JobState j) {
        List<List<GpuGrant>> replicas = j.allocation().replicas();
        int[] nodes = new int[replicas.size()];
        for (int i = 0; i < nodes.length; i++) nodes[i] = replicas.get(i).getFirst().node();
        return nodes;
    }
}
