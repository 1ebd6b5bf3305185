package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;

import java.util.Collection;
import java.util.Comparator;

/**
 * Priority with aging: effective priority = priority + agingPerHour x hours waited. The job with the
 * highest effective priority that does not fit gets an EASY reservation, so once a job has aged to the
 * top it starts within the longest remaining run of the jobs holding its GPUs: no starvation.
 * With priorities p_low < p_high and aging rate a, a low job overtakes fresh high jobs after
 * (p_high - p_low) / a hours.
 */
public final class PriorityAgingPolicy implements QueuePolicy {
    @Override public String name() { return "priority"; }

    @Override public BlockingMode blocking() { return BlockingMode.BACKFILL; }

    public static double effectivePriority(JobState j, long nowMs, double agingPerHour) {
        return j.spec().priority() + agingPerHour * (j.waitedMs(nowMs) / 3_600_000.0);
    }

    @Override
    public JobQueue queue(PolicyContext ctx, Collection<JobState> pending) {
        long now = ctx.nowMs();
        double rate = ctx.config().agingPerHour();
        return JobQueue.sorted(pending, Comparator.comparingDouble((JobState j) -> -effectivePriority(j, now, rate)));
    }
}
