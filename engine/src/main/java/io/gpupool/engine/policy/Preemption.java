package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Which running jobs a job that does not fit may stop, and in what order they are taken. Implemented by the
 * policies that declare {@link PolicyTraits.Trait#PREEMPTIVE}; only preemptible jobs are ever offered as victims.
 */
public interface Preemption {
    /**
     * Whether {@code job} could preempt anything now, checked before the running jobs are scanned for victims:
     * false spares that scan when the answer does not depend on the victim (e.g. a tenant above its guarantee
     * reclaims nothing). Must be true whenever {@link #mayPreempt} is true for some job that was running when the
     * round began (a job started at the round's instant is never a victim). Called during a round, after that
     * round's {@link QueueOrder#queue}.
     */
    default boolean mayPreemptAny(PolicyContext ctx, JobState job) {
        return true;
    }

    /**
     * Whether {@link #mayPreemptAny} is false for every job now (e.g. no tenant has a guarantee to reclaim): a round may
     * then stop walking its queue once placement refuses every shape still queued. Default: not known.
     */
    default boolean noneMayPreempt(PolicyContext ctx) {
        return false;
    }

    /** Whether {@code victim} (running, preemptible) may be stopped so that {@code job} can start. */
    boolean mayPreempt(PolicyContext ctx, JobState job, JobState victim);

    /**
     * {@link #mayPreempt} split into a rank per victim and a bound per job, for a policy whose rule compares one number
     * of each (an index, a queue, a remaining time): {@code mayPreempt(ctx, job, v)} is exactly
     * {@code rankAt(i) < boundOf(job)} for the i-th job {@code v} of {@code inVictimOrder}, the list
     * {@link #runningInVictimOrder} just gave at {@code ctx}, for the rest of the round at that instant (also after jobs
     * of the list stopped or started in it). A round's planner then ranks each victim once, however many blocked jobs
     * walk past it. Default: none (the planner asks {@link #mayPreempt}).
     */
    default VictimRanks victimRanks(PolicyContext ctx, List<JobState> inVictimOrder) {
        return null;
    }

    /** See {@link #victimRanks}. */
    interface VictimRanks {
        /** The rank of the i-th job of the list the ranks were made for. */
        double rankAt(int i);

        /** A job may preempt exactly the victims ranked below this. */
        double boundOf(JobState job);
    }

    /**
     * Whether {@code victim} may be taken for {@code job} on top of the victims already {@code chosen} for it in
     * the same plan (checked as the plan grows). Default: yes.
     */
    default boolean mayAlsoPreempt(PolicyContext ctx, JobState job, JobState victim, List<JobState> chosen) {
        return true;
    }

    /** Order in which victims are taken, cheapest first (see {@link #cheapestFirst}). */
    default Comparator<JobState> victimOrder(PolicyContext ctx) {
        return cheapestFirst(ctx);
    }

    /**
     * Every running job (preemptible or not), in {@link #victimOrder} at the context's time: the preemption planner
     * walks it. The default sorts them; a policy that keeps its running jobs in that order across rounds returns its
     * standing list, which must be exactly the sorted one (the caller does not change it).
     */
    default List<JobState> runningInVictimOrder(PolicyContext ctx) {
        List<JobState> all = new ArrayList<>(ctx.running());
        all.sort(victimOrder(ctx));
        return all;
    }

    /** Lowest priority, least work lost, fewest GPUs, latest arrival first. */
    static Comparator<JobState> cheapestFirst(PolicyContext ctx) {
        long now = ctx.nowMs();
        return Comparator.comparingInt((JobState j) -> j.spec().priority())
                .thenComparingLong(j -> j.runningForMs(now))
                .thenComparingDouble(JobState::gpuUnits)
                .thenComparing(Comparator.comparingLong(JobState::seq).reversed());
    }
}
