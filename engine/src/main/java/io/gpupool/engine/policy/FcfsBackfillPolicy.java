package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;

import java.util.Comparator;

import static io.gpupool.engine.policy.PolicyTraits.Trait.STANDING_ORDER;

/**
 * FCFS with EASY backfill: the head that does not fit gets a reservation at the earliest time enough
 * GPUs free up (from run-time estimates); jobs behind it start now only if they do not delay it.
 */
public final class FcfsBackfillPolicy implements QueuePolicy, StandingOrder {
    private final PolicyTraits traits;

    public FcfsBackfillPolicy(BackfillArgs args) {
        this.traits = PolicyTraits.backfill(args.backfillDepth(), STANDING_ORDER);
    }

    @Override public String name() { return "fcfs-backfill"; }

    @Override public PolicyTraits traits() { return traits; }

    @Override
    public Comparator<JobState> standingOrder(PolicyContext ctx) {
        return Comparator.comparingLong((JobState j) -> j.spec().submitTimeMs());
    }
}
