package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;

import java.util.Collection;
import java.util.Comparator;
import java.util.OptionalLong;

/**
 * A queue policy: the order pending jobs are tried in, what happens when one does not fit, and which
 * running jobs it may preempt. The dispatcher in {@code Scheduler} does the rest, the same for all.
 */
public interface QueuePolicy {
    String name();

    BlockingMode blocking();

    /** This round's pending jobs in the order to try them. */
    JobQueue queue(PolicyContext ctx, Collection<JobState> pending);

    /**
     * The order of {@link #queue} when it is a key of each job that does not change while the job waits
     * (submit time; attained service, which only grows while a job runs); null (the default) when the
     * order must be computed afresh every round. With a standing order the scheduler keeps the queue
     * sorted as jobs come and go ({@link StandingQueue}) instead of sorting every pending job each round.
     * It must give the same order as {@link #queue}; ties go to arrival order in both.
     */
    default Comparator<JobState> standingOrder(PolicyContext ctx) {
        return null;
    }

    /** Whether {@code victim} (running, preemptible) may be stopped so that {@code job} can start. */
    default boolean mayPreempt(PolicyContext ctx, JobState job, JobState victim) {
        return false;
    }

    /** Whether the policy preempts at all (lets the dispatcher skip victim search). */
    /**
     * Whether a round after a settled one (it started and preempted nothing, and since then only jobs arrived,
     * the cluster unchanged) may try only the arrivals: true where a job refused then is refused again whatever
     * the time, because the policy's refusals depend only on the cluster, the ledger's held GPUs and the
     * configuration (its order may change with time: that does not matter when every older job is refused).
     * False (the default) for time-dependent rules: reservations from expected ends, attained service, strict
     * order behind a blocked head.
     */
    default boolean arrivalsOnlyWhenSettled() {
        return false;
    }

    default boolean preemptive() {
        return false;
    }

    /**
     * Whether {@code job} could preempt anything now, checked before the running jobs are scanned for
     * victims: false spares that scan when the answer does not depend on the victim (e.g. a tenant above its
     * guarantee reclaims nothing). Must be true whenever {@link #mayPreempt} is true for some job that was
     * running when the round began (a job started at the round's instant is never a victim). Called during a
     * round, after that round's {@link #queue}.
     */
    default boolean mayPreemptAny(PolicyContext ctx, JobState job) {
        return preemptive();
    }

    /**
     * Whether {@code victim} may be taken for {@code job} on top of the victims already {@code chosen} for it
     * in the same plan (checked as the plan grows). Default: yes.
     */
    default boolean mayAlsoPreempt(PolicyContext ctx, JobState job, JobState victim, java.util.List<JobState> chosen) {
        return true;
    }

    /**
     * Whether the jobs {@link #mayPreempt} allows always come first in {@link #victimOrder}, whatever the
     * preempting job (true where the rule and the order use one measure, as in las and srtf-oracle): the
     * victim search may then stop at the first running job it may not take.
     */
    default boolean allowedVictimsComeFirst() {
        return false;
    }

    /** Order in which victims are taken (cheapest first): lowest priority, least work lost, fewest GPUs. */
    default Comparator<JobState> victimOrder(PolicyContext ctx) {
        long now = ctx.nowMs();
        return Comparator.comparingInt((JobState j) -> j.spec().priority())
                .thenComparingLong(j -> j.runningForMs(now))
                .thenComparingDouble(JobState::gpuUnits)
                .thenComparing(Comparator.comparingLong(JobState::seq).reversed());
    }

    /** A policy rule that keeps a job from starting now (null = none). */
    default String admit(PolicyContext ctx, JobState job) {
        return null;
    }

    /** When the order may change with no arrival or completion (e.g. a job crossing a LAS threshold). */
    default OptionalLong nextReevaluationMs(PolicyContext ctx) {
        return OptionalLong.empty();
    }
}
