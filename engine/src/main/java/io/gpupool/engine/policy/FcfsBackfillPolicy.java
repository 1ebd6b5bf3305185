package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;

import java.util.Collection;
import java.util.Comparator;

/**
 * FCFS with EASY backfill: the head that does not fit gets a reservation at the earliest time enough
 * GPUs free up (from run-time estimates); jobs behind it start now only if they do not delay it.
 */
public final class FcfsBackfillPolicy implements QueuePolicy {
    @Override public String name() { return "fcfs-backfill"; }

    @Override public BlockingMode blocking() { return BlockingMode.BACKFILL; }

    @Override
    public JobQueue queue(PolicyContext ctx, Collection<JobState> pending) {
        return JobQueue.sorted(pending, standingOrder(ctx));
    }

    @Override
    public Comparator<JobState> standingOrder(PolicyContext ctx) {
        return Comparator.comparingLong((JobState j) -> j.spec().submitTimeMs());
    }
}
