package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;

import java.util.Comparator;

import static io.gpupool.engine.policy.PolicyTraits.Trait.STANDING_ORDER;

/** First come, first served, strict: the head of the queue blocks everything behind it. */
public final class FcfsPolicy implements QueuePolicy, StandingOrder {
    private static final PolicyTraits TRAITS = PolicyTraits.of(BlockingMode.STRICT, STANDING_ORDER);

    @Override public String name() { return "fcfs"; }

    @Override public PolicyTraits traits() { return TRAITS; }

    @Override
    public Comparator<JobState> standingOrder(PolicyContext ctx) {
        return Comparator.comparingLong((JobState j) -> j.spec().submitTimeMs());
    }
}
