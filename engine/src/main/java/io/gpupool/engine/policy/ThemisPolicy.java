package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;

import java.util.Collection;

/**
 * Finish-time fairness after Themis (Mahajan et al., NSDI'20): the pending job that is worst off against an
 * exclusive 1/N share of the pool goes first. For a pending job j at a round at time {@code now}:
 * <pre>
 *   N       = jobs contending: pending + running
 *   C       = GPUs of the pool (fractional shares count as fractions)
 *   g       = GPUs the job asks for, R = its predicted run time (the engine's predictor: the estimate, else history)
 *   a       = its attained run time (preempted jobs keep theirs), remaining = max(0, R - a)
 *   T_shared = max(0, now - submit) + remaining           finish time, from submission, if it started now
 *   T_alone  = R x max(1, g x N / C)                      finish time on 1/N of the pool: full speed when C/N GPUs
 *                                                         hold the job, else slowed by the missing GPUs
 *   rho      = T_shared / T_alone                         higher first; ties to arrival order
 * </pre>
 * When every job asks for the same GPUs, rho orders as the response ratio (wait + R) / R (highest response ratio
 * next); smaller jobs that fit in a 1/N share gain on larger ones. rho grows while a job waits, and the top job that
 * does not fit gets an EASY reservation (backfill), so no job waits for ever. Unlike Themis, no leases and no
 * preemption: a running job keeps its GPUs until it ends.
 *
 * <p>The order moves with time, so it is computed every round; the terms of each queued job that stay fixed while it
 * waits are kept across rounds ({@link FairnessTerms}, told of the queue's changes as a {@link QueueObserver}), so a
 * round reads no job's state.
 */
public final class ThemisPolicy implements QueuePolicy, QueueObserver {
    /** Queues up to this long are sorted from the last round's order; longer ones go through a heap each round ({@code FairnessTerms}). */
    public static final int SORTED_QUEUE_UP_TO = 4096;

    private final PolicyTraits traits;
    private final FairnessTerms terms = new FairnessTerms();   // the queue's fixed terms, kept across rounds

    /** Its one setting is the depth of backfill behind the reserved top job. */
    public ThemisPolicy(BackfillArgs args) {
        this.traits = PolicyTraits.backfill(args.backfillDepth());
    }

    @Override public String name() { return "themis"; }

    @Override public PolicyTraits traits() { return traits; }

    @Override public void queued(JobState job) { terms.queued(job); }

    @Override public void dequeued(JobState job) { terms.dequeued(job); }

    @Override
    public JobQueue queue(PolicyContext ctx, Collection<JobState> pending) {
        int contending = pending.size() + ctx.running().size();
        double poolGpus = ctx.cluster().totalMilli() / 1000.0;
        JobQueue kept = terms.queue(ctx, pending.size(), contending, poolGpus);
        return kept != null ? kept : JobQueue.byKey(pending, j -> rho(ctx, j, contending, poolGpus), true);
    }

    /** The job's finish-time fairness ratio at {@code ctx.nowMs()} (see the class comment). */
    static double rho(PolicyContext ctx, JobState j, int contending, double poolGpus) {
        long now = ctx.nowMs();
        return rho(now, ctx.expectedRuntimeMs(j), j.attainedMs(now), j.spec().submitTimeMs(), j.gpuUnits(), contending, poolGpus);
    }

    /** rho of a job predicted to run {@code runMs} (capped by its time limit), from its terms: the one expression both paths compute. */
    static double rho(long nowMs, long runMs, long attainedMs, long submitMs, double gpus, int contending, double poolGpus) {
        long remainingMs = Math.max(0, runMs - attainedMs);
        double shared = Math.max(0, nowMs - submitMs) + (double) remainingMs;
        double alone = runMs * Math.max(1.0, poolGpus > 0 ? gpus * contending / poolGpus : 1.0);
        return shared / alone;
    }
}
