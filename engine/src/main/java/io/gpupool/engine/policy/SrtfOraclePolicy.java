package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;
import io.gpupool.model.SpecException;

import java.util.Comparator;
import java.util.List;

/**
 * Clairvoyant shortest-remaining-time-first, a reference bound only a simulator can run: at every event,
 * jobs in order of true remaining run time start greedily (skipping those that do not fit), and a
 * running job with a longer remaining time is preempted when that lets a shorter one start.
 */
public final class SrtfOraclePolicy implements QueuePolicy, StandingOrder, Preemption, RunObserver {
    @Override public String name() { return "srtf-oracle"; }

    /** Victims are ordered by remaining time, longest first, and allowed when it is longer than the job's (a later job's is no shorter). */
    private static final PolicyTraits TRAITS = PolicyTraits.of(BlockingMode.SKIP, PolicyTraits.Trait.PREEMPTIVE,
            PolicyTraits.Trait.STANDING_ORDER, PolicyTraits.Trait.ALLOWED_VICTIMS_COME_FIRST, PolicyTraits.Trait.LATER_JOBS_MAY_PREEMPT_LESS,
            PolicyTraits.Trait.NEEDS_ORACLE);

    @Override public PolicyTraits traits() { return TRAITS; }

    private final RunningByFinish running = new RunningByFinish();   // the running jobs in victim order, kept across rounds

    @Override public void runStarted(JobState job) { running.started(job); }

    @Override public void runEnded(JobState job) { running.ended(job); }

    static long remainingMs(PolicyContext ctx, JobState j) {
        if (ctx.oracle() == null) {
            throw new SpecException("policy srtf-oracle", "policy", "needs true run times, which only the simulator knows");
        }
        return Math.max(0, j.trueRuntimeMs(ctx.oracle()) - j.attainedMs(ctx.nowMs()));
    }

    /** A waiting job's remaining run time does not change. */
    @Override
    public Comparator<JobState> standingOrder(PolicyContext ctx) {
        return Comparator.comparingLong((JobState j) -> remainingMs(ctx, j));
    }

    @Override
    public boolean mayPreempt(PolicyContext ctx, JobState job, JobState victim) {
        return remainingMs(ctx, victim) > remainingMs(ctx, job);
    }

    /** Minus the remaining time (a double holds every time below 2^53 ms, some 285,000 years, exactly). */
    @Override
    public VictimRanks victimRanks(PolicyContext ctx, List<JobState> inVictimOrder) {
        return new VictimRanks() {
            @Override public double rankAt(int i) { return -(double) remainingMs(ctx, inVictimOrder.get(i)); }

            @Override public double boundOf(JobState job) { return -(double) remainingMs(ctx, job); }
        };
    }

    @Override
    public Comparator<JobState> victimOrder(PolicyContext ctx) {
        return Comparator.comparingLong((JobState j) -> -remainingMs(ctx, j)).thenComparingLong(JobState::seq);
    }

    /** The running jobs in {@link #victimOrder}, kept in it across rounds ({@link RunningByFinish}). */
    @Override
    public List<JobState> runningInVictimOrder(PolicyContext ctx) {
        return running.inVictimOrder(ctx);
    }
}
