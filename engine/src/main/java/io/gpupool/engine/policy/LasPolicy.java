package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;

import java.util.Comparator;
import java.util.List;
import java.util.OptionalLong;

/**
 * Discretized 2D-LAS (Tiresias, NSDI'19): no prior knowledge of run times. A job's queue is set by its
 * attained GPU-time (GPUs x time run) against the thresholds; lower queues first, FIFO by arrival
 * inside a queue. A pending job preempts running jobs of strictly later queues.
 */
public final class LasPolicy implements QueuePolicy, StandingOrder, Preemption, RunObserver {
    /** @param thresholdsGpuSec attained GPU-seconds at which a job drops to the next queue (positive, increasing) */
    public record Args(List<Double> thresholdsGpuSec) implements PolicyArgs {
        public static final Args DEFAULTS = new Args(List.of(3600.0, 36_000.0));

        public Args {
            thresholdsGpuSec = List.copyOf(thresholdsGpuSec);
            // the index names the threshold at fault: a configuration error points at its list entry
            for (int i = 0; i < thresholdsGpuSec.size(); i++) {
                double t = thresholdsGpuSec.get(i);
                String field = "thresholdsGpuSec[" + i + "]";
                if (i == 0) PolicyArgs.require(t > 0, field, "must be positive, got " + number(t));
                else PolicyArgs.require(t > thresholdsGpuSec.get(i - 1), field,
                        "must be greater than " + number(thresholdsGpuSec.get(i - 1)) + " (the thresholds increase), got " + number(t));
            }
        }

        private static String number(double v) {
            return v == Math.rint(v) && Math.abs(v) < 1e15 ? Long.toString((long) v) : Double.toString(v);
        }
    }

    private final double[] thresholds;
    private final RunningBands running;   // the running jobs' queues, kept across rounds

    public LasPolicy(Args args) {
        this.thresholds = args.thresholdsGpuSec().stream().mapToDouble(Double::doubleValue).toArray();
        this.running = new RunningBands(new RunningBands.Bands() {
            @Override public int bandOf(JobState job, long now) { return queueOf(job, now, thresholds); }

            @Override public double upperEdgeGpuSec(int queue) { return queue < thresholds.length ? thresholds[queue] : Double.POSITIVE_INFINITY; }

            @Override public double key(JobState job, int queue) { return -queue; }   // the highest queue first
        });
    }

    @Override public String name() { return "las"; }

    /** Victims are ordered by queue, latest first, and allowed in a queue later than the job's (a later job's queue is no earlier). */
    private static final PolicyTraits TRAITS = PolicyTraits.of(BlockingMode.SKIP, PolicyTraits.Trait.PREEMPTIVE,
            PolicyTraits.Trait.STANDING_ORDER, PolicyTraits.Trait.ALLOWED_VICTIMS_COME_FIRST, PolicyTraits.Trait.LATER_JOBS_MAY_PREEMPT_LESS);

    @Override public PolicyTraits traits() { return TRAITS; }

    static int queueOf(JobState j, long nowMs, double[] thresholdsGpuSec) {
        double gpuSec = j.attainedGpuMs(nowMs) / 1000.0;
        int q = 0;
        while (q < thresholdsGpuSec.length && gpuSec >= thresholdsGpuSec[q]) q++;
        return q;
    }

    @Override public void runStarted(JobState job) { running.started(job); }

    @Override public void runEnded(JobState job) { running.ended(job); }

    /** Highest queue of a running job when this round's order was made: no victim of the round is above it. */
    int highestQueue;   // package-private: a test compares it with a scan

    /**
     * A waiting job's attained service does not change, so neither does its queue. Called once per round
     * (by {@link #queue} or the scheduler's standing queue): it also notes the highest queue in use.
     */
    @Override
    public Comparator<JobState> standingOrder(PolicyContext ctx) {
        long now = ctx.nowMs();
        Integer kept = running.firstBand(now, 0);   // the highest queue comes first in victim order
        if (kept != null) highestQueue = kept;
        else {   // asked for an earlier time than before: the plain scan
            highestQueue = 0;
            for (JobState j : ctx.running()) highestQueue = Math.max(highestQueue, queueOf(j, now, thresholds));
        }
        return Comparator.comparingInt((JobState j) -> queueOf(j, now, thresholds)).thenComparingLong(j -> j.spec().submitTimeMs());
    }

    /** Only a job below the highest queue in use this round has a later queue to take GPUs from. */
    @Override
    public boolean mayPreemptAny(PolicyContext ctx, JobState job) {
        return queueOf(job, ctx.nowMs(), thresholds) < highestQueue;
    }

    @Override
    public boolean mayPreempt(PolicyContext ctx, JobState job, JobState victim) {
        return queueOf(victim, ctx.nowMs(), thresholds) > queueOf(job, ctx.nowMs(), thresholds);
    }

    /** Minus the queue (a lower queue may preempt a higher one): the key {@link RunningBands} keeps while its list stands, else worked out for the job. */
    @Override
    public VictimRanks victimRanks(PolicyContext ctx, List<JobState> inVictimOrder) {
        long now = ctx.nowMs();
        return new VictimRanks() {
            @Override public double rankAt(int i) {
                return running.stillGives(inVictimOrder) ? running.storedKey(i) : -queueOf(inVictimOrder.get(i), now, thresholds);
            }

            @Override public double boundOf(JobState job) { return -queueOf(job, now, thresholds); }
        };
    }

    @Override
    public Comparator<JobState> victimOrder(PolicyContext ctx) {
        long now = ctx.nowMs();
        return Comparator.comparingInt((JobState j) -> -queueOf(j, now, thresholds)).thenComparing(Preemption.cheapestFirst(ctx));
    }

    /** The running jobs in {@link #victimOrder}, kept in it across rounds ({@link RunningBands}). */
    @Override
    public List<JobState> runningInVictimOrder(PolicyContext ctx) {
        List<JobState> kept = running.inVictimOrder(ctx.nowMs());
        return kept != null ? kept : Preemption.super.runningInVictimOrder(ctx);
    }

    /** The next moment a running job crosses a threshold and drops a queue. */
    @Override
    public OptionalLong nextReevaluationMs(PolicyContext ctx) {
        OptionalLong kept = running.nextCrossing(ctx.nowMs());
        return kept != null ? kept : nextCrossingScanned(ctx);
    }

    /** {@link #nextReevaluationMs} by a scan of every running job (what {@link RunningBands} answers without one). */
    OptionalLong nextCrossingScanned(PolicyContext ctx) {
        long now = ctx.nowMs();
        return EdgeCrossings.next(ctx, j -> {
            int q = queueOf(j, now, thresholds);
            return q < thresholds.length ? thresholds[q] : Double.POSITIVE_INFINITY;
        });
    }
}
