package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;

import java.util.Collection;
import java.util.Comparator;

/**
 * An order by a key of each job that does not change while the job waits (submit time; attained service, which
 * only grows while a job runs). The scheduler then keeps the queue sorted as jobs come and go ({@link StandingQueue})
 * instead of sorting every pending job each round. Declared with {@link PolicyTraits.Trait#STANDING_ORDER}.
 * A policy whose keys change at a few known moments (a table it learned is refreshed) says so through
 * {@link #orderVersion}: the queue is sorted afresh when that number changes.
 */
public interface StandingOrder extends QueueOrder {
    /** The order, asked once per round; ties go to arrival order. */
    Comparator<JobState> standingOrder(PolicyContext ctx);

    /** Changes whenever the order of waiting jobs may have changed other than by jobs coming and going. */
    default long orderVersion() {
        return 0;
    }

    /** The same order sorted afresh: by construction it gives the order of {@link #standingOrder}. */
    @Override
    default JobQueue queue(PolicyContext ctx, Collection<JobState> pending) {
        return JobQueue.sorted(pending, standingOrder(ctx));
    }
}
