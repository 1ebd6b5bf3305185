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
public final class LasPolicy implements QueuePolicy, StandingOrder, Preemption {
    @Override public String name() { return "las"; }

    /** Victims are ordered by queue, latest first, and allowed in a queue later than the job's. */
    private static final PolicyTraits TRAITS = PolicyTraits.of(BlockingMode.SKIP, PolicyTraits.Trait.PREEMPTIVE,
            PolicyTraits.Trait.STANDING_ORDER, PolicyTraits.Trait.ALLOWED_VICTIMS_COME_FIRST);

    @Override public PolicyTraits traits() { return TRAITS; }

    static int queueOf(JobState j, long nowMs, List<Double> thresholdsGpuSec) {
        double gpuSec = j.attainedGpuMs(nowMs) / 1000.0;
        int q = 0;
        while (q < thresholdsGpuSec.size() && gpuSec >= thresholdsGpuSec.get(q)) q++;
        return q;
    }

    /** Highest queue of a running job when this round's order was made: no victim of the round is above it. */
    private int highestQueue;

    /**
     * A waiting job's attained service does not change, so neither does its queue. Called once per round
     * (by {@link #queue} or the scheduler's standing queue): it also notes the highest queue in use.
     */
    @Override
    public Comparator<JobState> standingOrder(PolicyContext ctx) {
        List<Double> th = ctx.config().lasThresholdsGpuSec();
        long now = ctx.nowMs();
        highestQueue = 0;
        for (JobState j : ctx.running()) highestQueue = Math.max(highestQueue, queueOf(j, now, th));
        return Comparator.comparingInt((JobState j) -> queueOf(j, now, th)).thenComparingLong(j -> j.spec().submitTimeMs());
    }

    /** Only a job below the highest queue in use this round has a later queue to take GPUs from. */
    @Override
    public boolean mayPreemptAny(PolicyContext ctx, JobState job) {
        return queueOf(job, ctx.nowMs(), ctx.config().lasThresholdsGpuSec()) < highestQueue;
    }

    @Override
    public boolean mayPreempt(PolicyContext ctx, JobState job, JobState victim) {
        List<Double> th = ctx.config().lasThresholdsGpuSec();
        return queueOf(victim, ctx.nowMs(), th) > queueOf(job, ctx.nowMs(), th);
    }

    @Override
    public Comparator<JobState> victimOrder(PolicyContext ctx) {
        List<Double> th = ctx.config().lasThresholdsGpuSec();
        long now = ctx.nowMs();
        return Comparator.comparingInt((JobState j) -> -queueOf(j, now, th)).thenComparing(Preemption.cheapestFirst(ctx));
    }

    /** The next moment a running job crosses a threshold and drops a queue. */
    @Override
    public OptionalLong nextReevaluationMs(PolicyContext ctx) {
        List<Double> th = ctx.config().lasThresholdsGpuSec();
        long now = ctx.nowMs();
        long best = Long.MAX_VALUE;
        for (JobState j : ctx.running()) {
            int q = queueOf(j, now, th);
            if (q >= th.size() || j.gpuUnits() <= 0) continue;
            double needGpuMs = th.get(q) * 1000.0 - j.attainedGpuMs(now);
            long at = now + Math.max(1, (long) Math.ceil(needGpuMs / j.gpuUnits()));
            best = Math.min(best, at);
        }
        return best == Long.MAX_VALUE ? OptionalLong.empty() : OptionalLong.of(best);
    }
}
