package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;

import java.util.Collection;
import java.util.Comparator;

/** First come, first served, strict: the head of the queue blocks everything behind it. */
public final class FcfsPolicy implements QueuePolicy {
    @Override public String name() { return "fcfs"; }

    @Override public BlockingMode blocking() { return BlockingMode.STRICT; }

    @Override
    public JobQueue queue(PolicyContext ctx, Collection<JobState> pending) {
        return JobQueue.sorted(pending, standingOrder(ctx));
    }

    @Override
    public Comparator<JobState> standingOrder(PolicyContext ctx) {
        return Comparator.comparingLong((JobState j) -> j.spec().submitTimeMs());
    }
}
