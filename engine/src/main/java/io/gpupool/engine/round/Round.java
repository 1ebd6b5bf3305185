package io.gpupool.engine.round;

import io.gpupool.engine.JobState;
import io.gpupool.engine.RoundResult;
import io.gpupool.engine.batch.BatchPlacer;
import io.gpupool.engine.placement.PlacementPipeline;
import io.gpupool.engine.placement.WorkloadProfile;
import io.gpupool.engine.policy.Admission;
import io.gpupool.engine.policy.BlockingMode;
import io.gpupool.engine.policy.JobQueue;
import io.gpupool.engine.policy.PolicyContext;
import io.gpupool.engine.policy.PolicyTraits;
import io.gpupool.engine.policy.QuietRounds;
import io.gpupool.engine.policy.StandingQueue;
import io.gpupool.engine.state.ClusterState;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * The scheduling round, the same for every policy: batch mode's step (when on), then the {@link Dispatch} walk over
 * the policy's order. It keeps what rounds remember between them: shapes that failed on an unchanged cluster
 * ({@link FailureMemo}) and whether only jobs arrived since a round that changed nothing ({@link SettledMemo}).
 */
public final class Round {
    final ClusterState cluster;
    final WorkloadProfile profile;
    final RoundJobs jobs;
    final FailureMemo failures = new FailureMemo();
    final ReservationMemo reservations = new ReservationMemo();
    final RunningTerms runningTerms = new RunningTerms();   // the running jobs' expected ends, kept for EASY reservations
    final IdleGpuCounts idleGpus = new IdleGpuCounts();   // the preemption planner's counts, buffers reused between rounds
    final PreemptionPlanner.Buffers plannerBuffers = new PreemptionPlanner.Buffers();   // the planner's lists, reused too
    private final SettledMemo settled = new SettledMemo();
    private final SettledBackfill settledBackfill = new SettledBackfill();
    PolicyParts policy;
    PlacementPipeline pipeline;
    private StandingQueue standing;     // pending jobs kept in order, for policies with a standing order
    private BatchPlacer batchPlacer;
    String preemptedHold;               // non-null: a job a round preempts is held with this reason
    boolean stopWalks = true;           // a full round may stop walking once only refusals are left (Dispatch)
    long walksStopped;                  // full rounds whose walk stopped so
    long shapesPassedOver, passesResumed;   // refused shapes whose later jobs a walk passed over, and passes taken back (Dispatch)
    long plansSkippedBySize;                // blocked jobs not planned for: a smaller one found no victims (Dispatch)
    long quietRounds;                       // rounds not walked: only time passed and no rank moved that matters (quietRound)

    public Round(ClusterState cluster, WorkloadProfile profile, RoundJobs jobs) {
        this.cluster = cluster;
        this.profile = profile;
        this.jobs = jobs;
    }

    /** A new policy, pipeline and standing queue (null: the policy has no standing order); forgets what rounds remembered. */
    public void configure(PolicyParts policy, PlacementPipeline pipeline, StandingQueue standing) {
        settled.unsettle();
        this.policy = policy;
        this.pipeline = pipeline;
        this.standing = standing;
        failures.forget();
        reservations.forget();
        settledBackfill.forget();
    }

    /** Batch mode: each round first starts what the placer picks from the head of the queue; null = off. */
    public void setBatchPlacer(BatchPlacer placer) {
        settled.unsettle();
        this.batchPlacer = placer;
    }

    /** Holds every job a round preempts with this reason (null: a preempted job may start again at once). */
    public void holdPreemptedJobs(String reason) {
        this.preemptedHold = reason;
    }

    /** Something other than an arrival changed what a round would decide. */
    public void unsettle() {
        settled.unsettle();
    }

    /**
     * What rounds remember no longer holds although the cluster did not change: the advance reservations changed, or a
     * window began or ended (who may use which GPUs changed).
     */
    public void forgetMemos() {
        settled.unsettle();
        failures.forget();
        reservations.forget();
        settledBackfill.forget();
    }

    /**
     * Every round walks, and walks its whole queue, and plans for every blocked job whose own shape found victims (a
     * test compares that with walks that stop once only refusals are left, that skip jobs larger than one that found
     * none, and with quiet rounds that do not walk).
     */
    public void walkWholeQueues() {
        stopWalks = false;
    }

    /** Full rounds whose walk stopped once only refusals were left (tests). */
    public long walksStopped() {
        return walksStopped;
    }

    /** Refused shapes whose later jobs a walk passed over, and of those the passes a preemption took back (tests). */
    public long[] shapesPassedOver() {
        return new long[] {shapesPassedOver, passesResumed};
    }

    /** Blocked jobs not planned for because a smaller job of the round found no victims (tests). */
    public long plansSkippedBySize() {
        return plansSkippedBySize;
    }

    /** Rounds not walked because only time passed since a round that changed nothing and no rank moved that matters (tests). */
    public long quietRounds() {
        return quietRounds;
    }

    /** A job started running (also one restored as running), its run's start and the run time before it set. */
    public void runStarted(JobState job) {
        runningTerms.started(job);
    }

    /** A running job stopped (ended, or preempted), before it is queued again. */
    public void runEnded(JobState job) {
        runningTerms.ended(job);
    }

    /** A job was queued. */
    public void arrived(JobState job) {
        settled.arrived(job);
    }

    /** One round at {@code ctx.nowMs()}. */
    public RoundResult run(PolicyContext ctx) {
        if (quietRound(ctx)) {
            RoundResult none = new RoundResult(List.of(), List.of());
            settled.roundEnded(none, cluster.version());
            quietRounds++;
            return none;
        }
        if (standing != null && batchPlacer == null && settled.settledAt(cluster.version()) && policy.traits().blocking() == BlockingMode.BACKFILL
                && policy.admission() == Admission.NONE
                && settledBackfill.holds(ctx, settled.pendingArrivals(), standing.order(ctx), reservations, jobs)) {
            // only jobs arrived, all behind the backfill depth: this round would start nothing and change no reason
            RoundResult none = new RoundResult(List.of(), List.of());
            settled.roundEnded(none, cluster.version());
            return none;
        }
        boolean onlyArrivals = settled.settledAt(cluster.version()) && policy.has(PolicyTraits.Trait.ARRIVALS_ONLY_WHEN_SETTLED)
                && standing == null && batchPlacer == null && pipeline.dependsOnlyOnClusterState();
        if (!onlyArrivals) {
            // a full round: every pending job gets this round's reason (older jobs keep theirs in a round of arrivals)
            jobs.beginFullRound();
        }
        List<String> started = new ArrayList<>();
        if (batchPlacer != null) BatchStep.start(ctx, batchPlacer, policy, pipeline, profile, jobs, started);
        Collection<JobState> candidates = onlyArrivals ? settled.pendingArrivals() : jobs.pending();
        JobQueue queue = standing != null ? standing.round(ctx) : policy.policy().queue(ctx, candidates);
        RoundResult result;
        try {
            Dispatch walk = new Dispatch(this, ctx, queue, started, !onlyArrivals);
            result = walk.walk();
            walk.settle(settledBackfill);
        } finally {
            if (standing != null) standing.endRound();
        }
        settled.roundEnded(result, cluster.version());
        return result;
    }

    /**
     * Whether this round would start and preempt nothing and give every job the reason it has, so that it need not
     * walk: the last round changed nothing, only time passed since, and the policy says no rank moved so that a waiting
     * job may stop a job it could not stop then ({@link QuietRounds}). A QuietRounds policy is asked at every round: it
     * notes its ranks then.
     */
    private boolean quietRound(PolicyContext ctx) {
        if (!(policy.policy() instanceof QuietRounds quiet)) return false;
        boolean mayDecideOtherwise = quiet.mayDecideOtherwise(ctx, standing.first(), PreemptionPlanner.MAX_CANDIDATES);
        return !mayDecideOtherwise && stopWalks && settled.settledAt(cluster.version()) && !settled.anyArrival() && batchPlacer == null
                && pipeline.dependsOnlyOnClusterState();
    }
}
