package io.gpupool.engine.round;

import io.gpupool.engine.JobState;
import io.gpupool.engine.JobStatus;
import io.gpupool.engine.RoundResult;
import io.gpupool.engine.placement.CycleState;
import io.gpupool.engine.placement.GpuMasks;
import io.gpupool.engine.placement.PlacementResult;
import io.gpupool.engine.policy.Admission;
import io.gpupool.engine.policy.BlockingMode;
import io.gpupool.engine.policy.JobQueue;
import io.gpupool.engine.policy.PolicyContext;
import io.gpupool.engine.policy.PolicyTraits;
import io.gpupool.engine.policy.Preemption;
import io.gpupool.engine.reservation.Fence;
import io.gpupool.engine.reservation.ReservationBook;
import io.gpupool.engine.status.Status;
import io.gpupool.model.JobSpec;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One round's walk over the policy's queue, shared by all policies:
 * <pre>
 * for job in policy order:
 *     tenant limit / array cap / policy admission refuses  -> skip, record the reason
 *     a reservation exists (backfill)          -> start only if it ends before the reservation or fits on GPUs outside it
 *     placement succeeds                       -> start
 *     preemptive policy and victims exist      -> preempt the cheapest sufficient set, start
 *     it fits only on GPUs advance reservations keep it off -> skip, record the reason (it blocks nobody)
 *     otherwise by blocking mode: STRICT stops the round, BACKFILL reserves (EASY), SKIP goes on
 * </pre>
 * Every placement leaves out the GPUs advance reservations keep the job off ({@link Fence}).
 * Jobs of one shape fit or fail together, so a failed placement is not repeated for that shape in the round (nor,
 * through the {@link FailureMemo}, in later rounds while the cluster is unchanged).
 *
 * <p>A full round of a SKIP policy stops walking once every shape still queued has been refused and no job left can
 * preempt or be refused otherwise (no limit, cap, reservation or admission rule applies): each job left would only be
 * refused again with its shape's refusal, which the jobs then read from the round ({@link RoundJobs#restWaits}).
 */
final class Dispatch {
    private final Round r;
    private final PolicyContext ctx;
    private final JobQueue queue;
    private final long nowMs;
    private final List<String> started;
    private final List<String> preempted = new ArrayList<>();
    private final Map<String, Status> failedShapes = new HashMap<>();
    // shapes whose later jobs have no victims in this round, per tenant (a key per blocked job would be made and hashed
    // at every one: it was most of fair-share's allocation); LATER_JOBS_MAY_PREEMPT_LESS keys by shape alone, in its
    // own set (asked at every blocked job of those policies' walks)
    private final Map<String, Set<String>> noVictims = new HashMap<>();
    private final Set<String> noVictimsAnyTenant = new HashSet<>();
    private boolean noLaterJobPreempts;             // a job earlier in the order might preempt nothing (LATER_JOBS_MAY_PREEMPT_LESS)
    private final boolean sizesMemo;                // noVictimsSizes applies (see largerThanRefused)
    private int[] noVictimsSizes = new int[8];      // (replicas, GPUs each) of plain whole-GPU jobs that found no victims
    private int noVictimsSizeCount;
    private Map<String, Set<Long>> fencedBehindReservation;   // fence key -> its GPUs and the EASY reservation's; made on first use (most rounds have none)
    private PreemptionPlanner planner;
    private Set<Long> masksExcluded, masksOnly;   // the sets `masks` was made of (by identity)
    private GpuMasks masks;
    private EasyReservation reservation;
    private Map<Status, Status> backfillRefusals;   // placement refusal -> the same behind this round's reservation
    private Status lastCause, lastRefusal;          // the last entry backfillRefusal gave
    private JobState reservedHead;                  // the job the reservation is for, refused with headRefusal
    private Status headRefusal;
    private JobState lastConsidered;                // the last backfill candidate
    private boolean depthUsedUp;                    // the walk stopped at the backfill depth
    private long reasonsHoldUntilMs = Long.MAX_VALUE;
    private int backfillLeft;
    private final boolean mayStopEarly;             // a full round of a SKIP policy (see restOnlyWaits)
    private boolean recheck = true;                 // something restOnlyWaits reads changed since it was last asked
    private final List<JobState> victimsNotPolled = new ArrayList<>();   // preempted in this round, not polled again yet
    private final boolean mayPassOver;              // the queue may pass over a refused shape's later jobs (see passOver)
    private boolean passedOver;                     // it passed over some: their refusals are read from the round
    private boolean stoppedEarly;                   // restOnlyWaits stopped the walk (it gave the rest their refusals)

    /**
     * @param started   what batch mode started in this round (the walk adds to it)
     * @param fullRound every pending job is in the queue and gets this round's reason (not a round of arrivals)
     */
    Dispatch(Round round, PolicyContext ctx, JobQueue queue, List<String> started, boolean fullRound) {
        this.r = round;
        this.ctx = ctx;
        this.queue = queue;
        this.nowMs = ctx.nowMs();
        this.started = started;
        this.backfillLeft = round.policy.traits().backfillDepth();
        this.mayStopEarly = fullRound && round.stopWalks && round.policy.traits().blocking() == BlockingMode.SKIP;
        // asked once: both rules below need later jobs to preempt less and nothing but placement to refuse (no fence
        // lets a job on GPUs another may not use)
        boolean laterLessOnlyPlacement = round.policy.has(PolicyTraits.Trait.LATER_JOBS_MAY_PREEMPT_LESS) && round.jobs.onlyPlacementRefuses();
        this.sizesMemo = round.stopWalks && laterLessOnlyPlacement && round.policy.has(PolicyTraits.Trait.ALLOWED_VICTIMS_COME_FIRST);
        this.mayPassOver = mayStopEarly && laterLessOnlyPlacement && round.policy.preemption() != null
                && round.policy.admission() == Admission.NONE;
    }

    RoundResult walk() {
        PolicyTraits traits = r.policy.traits();
        JobState job;
        while (!(mayStopEarly && recheck && restOnlyWaits()) && (job = queue.poll()) != null) {
            if (!victimsNotPolled.isEmpty()) victimsNotPolled.remove(job);
            if (job.status() != JobStatus.PENDING || job.holdReason() != null) continue;
            if (r.policy.preemption() == null && r.cluster.usedMilli() >= r.cluster.totalMilli()) {
                r.jobs.unreached("waits: every GPU is in use");
                break;
            }
            Status why = r.jobs.quotaReason(job);
            if (why == null) why = Status.admission(r.policy.admission().admit(ctx, job));
            if (why != null) {
                r.jobs.waits(job, why);
                continue;
            }
            Fence fence = r.jobs.fence(job, nowMs);
            if (reservation != null) {
                if (backfillLeft-- <= 0) {
                    r.jobs.unreached("waits: not considered for backfill (more than " + traits.backfillDepth() + " jobs behind " + reservation.jobId() + ")");
                    depthUsedUp = true;
                    break;
                }
                lastConsidered = job;
                backfill(job, fence);
                continue;
            }
            String shape = fence.shapeKey(job.shapeKey());
            Status reason = failedShapes.get(shape);
            if (reason == null) {
                reason = startOrRefusal(job, shape, fence, null);
                if (reason == null) continue;
                failedShapes.put(shape, reason);
                recheck = true;
            }
            if (preemptFor(job, shape, fence)) continue;
            r.jobs.waits(job, reason);
            if (mayPassOver && queue.passOver(shape)) {
                passedOver = true;
                r.shapesPassedOver++;
            }
            if (reason.plugin().equals(ReservationBook.PLUGIN)) continue;   // kept off reserved GPUs only: like a cap, it blocks nobody
            if (traits.blocking() == BlockingMode.STRICT) {
                r.jobs.unreached("queued behind " + job.id() + " (strict FCFS)");
                break;
            } else if (traits.blocking() == BlockingMode.BACKFILL) {
                reservation = EasyReservation.reserve(ctx, job, fence, r.jobs.running(), r.runningTerms, r.pipeline, r.profile, r.reservations);
                if (reservation != null) {
                    reservedHead = job;
                    headRefusal = reason;
                    r.jobs.waits(job, reserved(reason, reservation));
                }
            }
        }
        // the walk reached the end of the queue: the jobs it passed over read their shapes' refusals, as a stopped walk's
        if (passedOver && !stoppedEarly) r.jobs.restWaits(failedShapes);
        return new RoundResult(started, preempted);
    }

    /**
     * Whether every job left in the queue would only be refused with its shape's refusal from this round, so the
     * walk may stop (it then leaves those refusals to the jobs left). A job left is pending and not held, or passed
     * over; it would be refused its shape's refusal when (1) its shape is refused in this round already: every pending
     * job's shape is (the pending jobs include those left); (2) nothing else refuses it: no limit, cap or reservation,
     * and the admission rule admits every job; (3) it may preempt nothing: the policy says no job may now, or later
     * jobs may preempt less (then the job that had a shape refused asked for victims at once and found none, so no
     * later job of that shape finds any, or it may preempt nothing, so no later job may); a policy that never preempts
     * stops instead at the next job once every GPU is in use, with its own note. Nothing these read changes while the
     * walk only refuses, so it is asked again only after a start, a preemption or a new refusal.
     */
    private boolean restOnlyWaits() {
        recheck = false;
        Set<String> shapes = r.jobs.pendingShapes();
        if (failedShapes.size() < shapes.size() || !failedShapes.keySet().containsAll(shapes)) return false;
        if (!r.jobs.onlyPlacementRefuses()) return false;
        if (r.policy.admission() != Admission.NONE && !r.policy.admission().admitsAll(ctx)) return false;
        Preemption rule = r.policy.preemption();
        if (rule == null) {
            if (r.cluster.usedMilli() >= r.cluster.totalMilli()) return false;
        } else if (!rule.noneMayPreempt(ctx) && !r.policy.has(PolicyTraits.Trait.LATER_JOBS_MAY_PREEMPT_LESS)) {
            return false;
        }
        // a job preempted in this round is queued again with a note, which its next poll would replace
        for (JobState v : victimsNotPolled) {
            if (v.status() == JobStatus.PENDING && v.holdReason() == null) r.jobs.waits(v, failedShapes.get(v.shapeKey()));
        }
        r.jobs.restWaits(failedShapes);
        r.walksStopped++;
        stoppedEarly = true;
        return true;
    }

    /** The blocked head's status: its placement refusal and the time its GPUs are reserved from. */
    static Status reserved(Status refusal, EasyReservation reservation) {
        long atMs = reservation.atMs();
        return refusal.within(() -> "GPUs reserved from t=" + atMs / 1000.0 + "s (expected); ");
    }

    /**
     * After the walk: remembers a round that changed nothing behind a reservation with its backfill depth used up,
     * so that rounds of arrivals behind it need not walk ({@link SettledBackfill}); forgets otherwise.
     */
    void settle(SettledBackfill settled) {
        if (started.isEmpty() && preempted.isEmpty() && reservedHead != null && depthUsedUp && r.pipeline.dependsOnlyOnClusterState()) {
            settled.remember(reservedHead, headRefusal, reservation, lastConsidered, reasonsHoldUntilMs);
        } else {
            settled.forget();
        }
    }

    /**
     * Behind a reservation: the job starts only if it ends before the reserved time or fits on GPUs outside it.
     */
    private void backfill(JobState job, Fence fence) {
        long expectedMs = ctx.expectedRuntimeMs(job);
        boolean endsBeforeReservation = nowMs + expectedMs <= reservation.atMs();
        // a clamped reservation moves with now (then this test does not change); a fixed one holds this answer until then
        if (endsBeforeReservation && reservation.atMs() > nowMs + ExpectedEnds.MIN_REMAINING_MS) {
            reasonsHoldUntilMs = Math.min(reasonsHoldUntilMs, reservation.atMs() - expectedMs);
        }
        Set<Long> excluded = endsBeforeReservation ? null : reservation.gpus();
        Status refused = startOrRefusal(job, fence.shapeKey(job.shapeKey()), fence, excluded);
        if (refused != null) r.jobs.waits(job, backfillRefusal(refused));
    }

    /**
     * Places the job outside its fence and the {@code excluded} GPUs (null: the EASY reservation's are not excluded) and
     * starts it, returning null; or returns why it does not fit: a {@code reservation} refusal when it would fit but
     * for its fence. A shape refused on the same cluster state, fence and GPUs is refused again without placing
     * ({@link FailureMemo}; the fence is part of {@code shape}).
     */
    private Status startOrRefusal(JobState job, String shape, Fence fence, Set<Long> excluded) {
        Status known = r.failures.knownFailure(r.cluster, shape, excluded);
        if (known != null) return known;
        PlacementResult p = r.pipeline.place(cycle(job, fence, excluded), true);
        if (p.ok()) {
            start(job, p);
            return null;
        }
        Status why = p.status();
        if (!fence.none() && (fence.within() != null || r.pipeline.place(cycle(job, Fence.NONE, excluded), false).ok())) {
            why = fence.keptOut(why);
        }
        if (r.pipeline.dependsOnlyOnClusterState()) r.failures.remember(r.cluster, shape, excluded, why);
        return why;
    }

    /** The backfill refusal for a placement's refusal, made once per cause in a round. */
    private Status backfillRefusal(Status cause) {
        // candidates come in runs of one cause (memoized refusals): the last answer first, without a map lookup
        if (cause == lastCause) return lastRefusal;
        if (backfillRefusals == null) backfillRefusals = new IdentityHashMap<>();
        Status refusal = backfillRefusals.get(cause);
        if (refusal == null) {
            refusal = Status.backfill(reservation.jobId(), cause);
            backfillRefusals.put(cause, refusal);
        }
        lastCause = cause;
        lastRefusal = refusal;
        return refusal;
    }

    /** Preempts the cheapest sufficient set of victims and starts the job; false when the policy allows none that make room. */
    private boolean preemptFor(JobState job, String shape, Fence fence) {
        if (r.policy.preemption() == null || noLaterJobPreempts) return false;
        // later jobs of the same shape (and tenant, unless the policy says later jobs may preempt less) have no more victims
        String victimTenant = r.policy.has(PolicyTraits.Trait.LATER_JOBS_MAY_PREEMPT_LESS) ? null : job.spec().tenant();
        Set<String> shapesWithout = victimTenant == null ? noVictimsAnyTenant : noVictims.get(victimTenant);
        // asked before mayPreemptAny (a Gittins index per blocked job), which most of these jobs pass: both answers are
        // "no". Skipping it may leave noLaterJobPreempts unset, but a later job then plans and finds no victim (the trait)
        if (shapesWithout != null && shapesWithout.contains(shape)) return false;
        if (sizesMemo && largerThanRefused(job)) {
            noVictimsAnyTenant.add(shape);
            r.plansSkippedBySize++;
            return false;
        }
        if (!r.policy.preemption().mayPreemptAny(ctx, job)) {
            // it may stop none of the jobs running when the round began; a later job may stop only what it may (the trait)
            if (r.policy.has(PolicyTraits.Trait.LATER_JOBS_MAY_PREEMPT_LESS)) noLaterJobPreempts = true;
            return false;
        }
        if (planner == null) {
            planner = new PreemptionPlanner(ctx, r.policy.preemption(), r.policy.has(PolicyTraits.Trait.ALLOWED_VICTIMS_COME_FIRST),
                    r.pipeline, j -> cycle(j, r.jobs.fence(j, nowMs), null), r.idleGpus, r.plannerBuffers);
        }
        List<JobState> victims = planner.plan(job);
        if (victims == null) {
            if (sizesMemo) noteRefusedSize(job);
            if (victimTenant == null) noVictimsAnyTenant.add(shape);
            else noVictims.computeIfAbsent(victimTenant, t -> new HashSet<>()).add(shape);
            return false;
        }
        for (JobState v : victims) {
            r.jobs.requeue(v, nowMs);
            r.jobs.hold(v, r.preemptedHold);
            r.jobs.note(v, "preempted for " + job.id());
            preempted.add(v.id());
            queue.requeue(v);
            if (mayStopEarly) victimsNotPolled.add(v);
        }
        if (passedOver) {   // the shapes passed over are polled again: the jobs passed before this one had their refusals
            queue.resumePassedOver(j -> {
                if (j.status() == JobStatus.PENDING && j.holdReason() == null) r.jobs.waits(j, failedShapes.get(j.shapeKey()));
            });
            passedOver = false;
            r.passesResumed++;
        }
        failedShapes.clear();
        noVictims.clear();
        noVictimsAnyTenant.clear();
        noVictimsSizeCount = 0;
        recheck = true;
        PlacementResult p = r.pipeline.place(cycle(job, fence, null), true);
        if (!p.ok()) throw new IllegalStateException("job " + job.id() + " does not fit after preempting " + victims);
        start(job, p);
        return true;
    }

    /**
     * Whether an earlier job of this round found no victims although it asked for no more than this whole-GPU job: as
     * many replicas or fewer, of as many whole GPUs or fewer, with no other demand (any GPU model, no NVLink rule, no
     * host request). Then this job finds none either: under LATER_JOBS_MAY_PREEMPT_LESS and ALLOWED_VICTIMS_COME_FIRST
     * its candidates are a prefix of the earlier job's (both the allowed victims, cheapest first, up to the planner's
     * cap), releasing fewer jobs frees a subset of the GPUs (and host resources), and any placement of this job
     * holds the earlier one (a subset of its replicas, a subset of each replica's GPUs). A plan's refusal says that
     * even all its candidates gone leave no room (or too few idle GPUs by counting).
     */
    private boolean largerThanRefused(JobState job) {
        if (noVictimsSizeCount == 0 || !job.spec().share().isWhole()) return false;
        int replicas = job.spec().shape().replicas(), gpus = job.spec().shape().gpusPerReplica();
        if (gpus == 0) return false;
        for (int i = 0; i < noVictimsSizeCount; i += 2) {
            if (replicas >= noVictimsSizes[i] && gpus >= noVictimsSizes[i + 1]) return true;
        }
        return false;
    }

    /** A plain whole-GPU job found no victims: later jobs at least as large in both need not plan (largerThanRefused). */
    private void noteRefusedSize(JobState job) {
        JobSpec spec = job.spec();
        if (!spec.share().isWhole() || spec.shape().gpusPerReplica() == 0 || !spec.allowedModels().isEmpty() || spec.requireNvlink()
                || spec.host().requested()) {
            return;
        }
        if (noVictimsSizeCount == noVictimsSizes.length) noVictimsSizes = Arrays.copyOf(noVictimsSizes, 2 * noVictimsSizeCount);
        noVictimsSizes[noVictimsSizeCount++] = spec.shape().replicas();
        noVictimsSizes[noVictimsSizeCount++] = spec.shape().gpusPerReplica();
    }

    private void start(JobState job, PlacementResult placed) {
        r.jobs.start(job, placed.allocation(), nowMs);
        recheck = true;
        started.add(job.id());
        queue.started(job);
    }

    /** The placement's scratch state: the job's fence and, when given, the EASY reservation's GPUs left out. */
    private CycleState cycle(JobState job, Fence fence, Set<Long> excluded) {
        Set<Long> out = excluded;
        if (!fence.excluded().isEmpty()) {
            if (excluded != null && fencedBehindReservation == null) fencedBehindReservation = new HashMap<>();
            out = excluded == null ? fence.excluded() : fencedBehindReservation.computeIfAbsent(fence.key(), k -> {
                Set<Long> both = new HashSet<>(fence.excluded());
                both.addAll(excluded);
                return both;
            });
        }
        Set<Long> only = fence.only();
        if (out == null && only == null) return new CycleState(r.cluster, job.spec(), r.profile, null, null);
        // a round's placements mostly leave out the same GPUs (the reservation's): their masks are made once
        if (out != masksExcluded || only != masksOnly) {
            masksExcluded = out;
            masksOnly = only;
            masks = GpuMasks.of(out == null ? Set.of() : out, only);
        }
        return new CycleState(r.cluster, job.spec(), r.profile, out, only, masks);
    }
}
