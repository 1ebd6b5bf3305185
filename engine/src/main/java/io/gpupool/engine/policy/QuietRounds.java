package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;

/**
 * A preemptive policy ({@link Preemption}) with a standing order ({@link StandingOrder}) whose rounds change with time
 * only through its running jobs' ranks ({@link Preemption#victimRanks}): while nothing but time passes, the order of its
 * waiting jobs, its admission, its refusals and each waiting job's bound stay as they are, and a running job's rank
 * moves only as its attained service crosses an edge (gittins' service levels). Such a policy can tell the round that
 * a round would change nothing, so that the round need not walk the queue: gittins' replay of Philly has 430k rounds,
 * 225k of them at a crossing with nothing else since a round that changed nothing, and of those under 0.2% start or
 * preempt anything.
 *
 * <p>Why the answer can be exact. A waiting job may stop a running job ranked below its bound, and no waiting job's
 * bound is above the first one's. If, since a round that started and preempted nothing, every running job whose rank
 * moved either rose or stayed at or above that bound, no waiting job may stop a job it could not stop then; and when
 * that round's planner tried every victim each job was allowed (no more than it tries per job), fewer victims make room
 * for none of them either. Placement, limits and reasons read only the cluster and the ledger, which did not change
 * (after a round that started jobs they would not all be the same: its starts changed the free GPUs some refusals
 * name, so such a round is not followed by a quiet one).
 */
public interface QuietRounds {
    /**
     * Asked at the start of every round, before anything else in it, and only then: the policy notes where its ranks
     * stand for the next ask. Whether this round might start or preempt something, supposing the previous round
     * started and preempted nothing and only time passed since (no arrival, end, hold or change of the cluster or the
     * configuration); the round checks that supposition itself and walks when it does not hold.
     *
     * @param first        the first waiting job in the standing order as the queue stands (null: none waits); the
     *                     queue is sorted afresh only when {@link StandingOrder#orderVersion} changes, which must also
     *                     make this answer true
     * @param victimsTried the most victims the round's planner tries for one job
     */
    boolean mayDecideOtherwise(PolicyContext ctx, JobState first, int victimsTried);
}
