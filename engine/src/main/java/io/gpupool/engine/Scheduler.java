package io.gpupool.engine;

import io.gpupool.engine.batch.BatchPlacer;
import io.gpupool.engine.batch.FewestMoves;
import io.gpupool.engine.placement.CycleState;
import io.gpupool.engine.placement.FilterPlugin;
import io.gpupool.engine.placement.PlacementPipeline;
import io.gpupool.engine.placement.PlacementResult;
import io.gpupool.engine.placement.WorkloadProfile;
import io.gpupool.engine.policy.HistoryMedianPredictor;
import io.gpupool.engine.policy.PolicyContext;
import io.gpupool.engine.policy.PolicyRegistry;
import io.gpupool.engine.policy.PolicyTraits;
import io.gpupool.engine.policy.QueuePolicy;
import io.gpupool.engine.policy.RuntimeOracle;
import io.gpupool.engine.policy.RuntimePredictor;
import io.gpupool.engine.policy.RunObserver;
import io.gpupool.engine.policy.QueueObserver;
import io.gpupool.engine.policy.StandingOrder;
import io.gpupool.engine.policy.CompletionObserver;
import io.gpupool.engine.policy.StandingQueue;
import io.gpupool.engine.policy.UsageHalfLife;
import io.gpupool.engine.reservation.Fence;
import io.gpupool.engine.reservation.Reservation;
import io.gpupool.engine.reservation.ReservationBook;
import io.gpupool.engine.reservation.ReservationRequest;
import io.gpupool.engine.round.PolicyParts;
import io.gpupool.engine.round.Round;
import io.gpupool.engine.round.RoundJobs;
import io.gpupool.engine.state.Allocation;
import io.gpupool.engine.state.ClusterState;
import io.gpupool.engine.state.GpuGrant;
import io.gpupool.engine.status.Status;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.JobSpec;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.Set;

/**
 * The engine: jobs in, decisions out. The service, the simulator, the optimizers and the Kubernetes
 * scheduler all drive this one class; it does no I/O and reads no clock (callers pass "now"), so the same
 * inputs always give the same decisions.
 *
 * <p>This class is the front door: the job lifecycle (submit, start, complete, cancel, preempt, hold), the nodes
 * and the views. A round ({@link #schedule}) is the {@link Round}'s: it asks the policy for the order of pending
 * jobs and walks it; each job goes through the placement pipeline; one that does not fit may preempt (preemptive
 * policies), then blocks (strict), gets a reservation that later jobs must not delay (backfill), or is passed over.
 *
 * <p>Over 500 lines for a reason: it is the one front door to every change of a job's lifecycle, each a few lines
 * that delegate to the parts with a concern of their own ({@link Round}, {@link ConcurrencyCaps}, {@link ReservationBook},
 * {@link Feasibility}, {@link NodeQueries}).
 */
public final class Scheduler {
    private final ClusterState cluster;
    private final TenantLedger ledger;
    private final WorkloadProfile profile = new WorkloadProfile();
    private final Map<String, JobState> jobs = new HashMap<>();
    private final JobTable pending = new JobTable();   // in the order queued
    private final JobTable running = new JobTable();   // in the order started
    private final PendingShapes pendingShapes = new PendingShapes();
    private final ShapeKeys shapeKeys = new ShapeKeys();   // one string per job shape (JobState.internShapeKey)
    private final ConcurrencyCaps caps = new ConcurrencyCaps();
    private final ReservationBook reservations = new ReservationBook();
    private SchedulerConfig config;
    private boolean anyTenantLimit;     // some tenant of the config has a hard limit (rounds ask per job)
    private QueuePolicy policy;
    private PlacementPipeline pipeline;
    private StandingQueue standing;     // pending jobs kept in order, for policies with a standing order
    private RuntimePredictor predictor;
    private final RuntimeOracle oracle;
    private final List<FilterPlugin> driverFilters = new ArrayList<>();
    private final JobState.RoundNote roundNote = new JobState.RoundNote();
    private final Round round;
    private String preemptedHold;   // non-null: a job a re-pack preempts is held with this reason ({@link #holdPreemptedJobs})
    private long seq;
    private long lastNowMs = Long.MIN_VALUE;
    private long lastRoundMs = Long.MIN_VALUE;

    public Scheduler(ClusterSpec spec, SchedulerConfig config) {
        this(spec, config, null);
    }

    /** @param oracle true run times, for the clairvoyant policy in simulation; null elsewhere */
    public Scheduler(ClusterSpec spec, SchedulerConfig config, RuntimeOracle oracle) {
        this.cluster = new ClusterState(spec);
        this.oracle = oracle;
        this.round = new Round(cluster, profile, new Jobs());
        this.predictor = new HistoryMedianPredictor(config.defaultRuntimeMs());
        this.ledger = new TenantLedger(config.tenants(), cluster.totalMilli() / 1000.0, cluster.totalMemoryMib(),
                TenantLedger.DEFAULT_HALF_LIFE_MS, 0);
        reconfigure(config);
    }

    /** Applies a new policy, placement and tenant configuration; running jobs keep their GPUs. */
    public void reconfigure(SchedulerConfig newConfig) {
        round.unsettle();
        QueuePolicy p = PolicyRegistry.create(newConfig.policy(), newConfig.policyArgs());
        if (p.traits().has(PolicyTraits.Trait.NEEDS_ORACLE) && oracle == null) {
            throw new io.gpupool.model.SpecException("scheduler", "policy", p.name() + " needs true run times, which only the simulator knows");
        }
        PlacementPipeline pl = new PlacementPipeline(newConfig.placement(), driverFilters);
        this.config = newConfig;
        this.anyTenantLimit = newConfig.tenants().values().stream().anyMatch(TenantConfig::hasLimit);
        this.policy = p;
        this.standing = null;
        if (p instanceof RunObserver o) for (JobState j : running.values()) o.runStarted(j);
        if (p instanceof QueueObserver o) for (JobState j : pending.values()) o.queued(j);
        if (p instanceof StandingOrder order) {
            standing = new StandingQueue(order, context(lastNowMs), StandingQueue.linesByShape(p.traits()));
            for (JobState j : pending.values()) standing.add(j);
        }
        this.pipeline = pl;
        round.configure(PolicyParts.of(p), pl, standing);
        ledger.reconfigure(newConfig.tenants(), p instanceof UsageHalfLife u ? u.usageHalfLifeMs() : TenantLedger.DEFAULT_HALF_LIFE_MS);
    }

    public void setPredictor(RuntimePredictor predictor) {
        round.unsettle();
        this.predictor = Objects.requireNonNull(predictor);
    }

    /** Batch mode: each round first starts what the placer picks from the head of the queue; null = off. */
    public void setBatchPlacer(BatchPlacer placer) {
        round.setBatchPlacer(placer);
    }

    // ---- job lifecycle --------------------------------------------------------------------------

    /** Queues the job, or rejects it with the reason when it could never run on this pool. */
    public SubmitResult submit(JobSpec spec, long nowMs) {
        advanceTo(nowMs);
        if (jobs.containsKey(spec.id())) return SubmitResult.rejected(spec.id(), Status.error(Status.SUBMIT, "job id " + spec.id() + " already exists"));
        JobState job = new JobState(spec, seq++, nowMs, roundNote);
        Status why = Feasibility.check(cluster, spec, config.tenants());
        jobs.put(spec.id(), job);
        if (why != null) {
            job.status = JobStatus.REJECTED;
            job.waitBecause(why);
            job.endMs = nowMs;
            return SubmitResult.rejected(spec.id(), why);
        }
        job.internShapeKey(shapeKeys);
        pending.put(job);
        pendingShapes.add(job);
        if (standing != null) standing.add(job);
        if (policy instanceof QueueObserver o) o.queued(job);
        round.arrived(job);
        profile.observe(spec, job.shapeKey());
        return SubmitResult.accepted(spec.id());
    }

    /** A running job finished; returns its state (a replay reads its outcome from it without a second look-up). */
    public JobState complete(String jobId, long nowMs) {
        round.unsettle();
        advanceTo(nowMs);
        JobState job = require(jobId);
        if (job.status != JobStatus.RUNNING) throw new IllegalStateException("job " + jobId + " is " + job.status + ", not RUNNING");
        stop(job, nowMs);
        job.status = JobStatus.COMPLETED;
        job.endMs = nowMs;
        predictor.observe(job.spec(), job.attainedMs(nowMs));
        if (policy instanceof CompletionObserver learner) learner.jobFinished(job, nowMs);
        return job;
    }

    /** Cancels a pending or running job; false when it had already ended. */
    public boolean cancel(String jobId, long nowMs) {
        round.unsettle();
        advanceTo(nowMs);
        JobState job = require(jobId);
        if (job.status.terminal()) return false;
        if (job.status == JobStatus.RUNNING) stop(job, nowMs);
        else {
            job.waitedMs += nowMs - job.queuedSinceMs;
            pending.remove(jobId);
            pendingShapes.remove(job);
            if (standing != null) standing.remove(job);
            if (policy instanceof QueueObserver o) o.dequeued(job);
        }
        job.status = JobStatus.CANCELLED;
        job.endMs = nowMs;
        return true;
    }

    /** Stops a running job and puts it back in the queue with its attained service (drain, admin). */
    public void preempt(String jobId, long nowMs) {
        round.unsettle();
        advanceTo(nowMs);
        JobState job = require(jobId);
        if (job.status != JobStatus.RUNNING) throw new IllegalStateException("job " + jobId + " is " + job.status + ", not RUNNING");
        requeue(job, nowMs);
    }

    /**
     * Keeps a pending job out of placement until {@link #releaseHold}: it keeps its place in the queue, never blocks
     * the jobs behind it (whatever the policy's blocking mode), and shows "held: REASON" as its wait reason. Holding
     * again replaces the reason. The service holds a requeued job until its last attempt is known to be gone.
     */
    public void hold(String jobId, String reason) {
        JobState job = require(jobId);
        if (job.status != JobStatus.PENDING) throw new IllegalStateException("job " + jobId + " is " + job.status + ", not PENDING");
        job.keepRestReason();
        job.holdReason = Objects.requireNonNull(reason);
        round.unsettle();   // a held head gives way to the next job: a round that skips the walk would not see it
    }

    /**
     * Holds every job a round preempts, with this reason, until the driver calls {@link #releaseHold}: for a driver
     * whose preempted attempts stop some time after the decision (the service's agents stop processes), so that the
     * job does not start again, here or elsewhere, while its last attempt may still run. Null (the default, the
     * simulator's) lets a preempted job start again in the same round.
     */
    public void holdPreemptedJobs(String reason) {
        preemptedHold = reason;   // a re-pack's preemptions too
        round.holdPreemptedJobs(reason);
    }

    /** Lets a held job be placed again from the next round on; false when it was not held. */
    public boolean releaseHold(String jobId) {
        JobState job = require(jobId);
        if (job.holdReason == null) return false;
        job.holdReason = null;
        job.queuedAgain();   // held when a round's walk stopped, it got no reason from it
        round.unsettle(); // a round of arrivals only would pass it over
        return true;
    }

    /**
     * Starts a pending job on the one node a caller chose (kube-scheduler's bind, a pod already bound there):
     * the tenant's hard limit, the filters and the GPU policy apply as in a round; only the choice of node is
     * the caller's. On failure the job stays pending and the result says why.
     */
    public PlacementResult startOn(String jobId, String node, long nowMs) {
        round.unsettle();
        advanceTo(nowMs);
        JobState job = require(jobId);
        if (job.status != JobStatus.PENDING) throw new IllegalStateException("job " + jobId + " is " + job.status + ", not PENDING");
        if (job.holdReason != null) return PlacementResult.failed(Status.held(job.holdReason));
        Status why = quotaReason(job);
        if (why != null) return PlacementResult.failed(why);
        Fence fence = reservations.fence(job, job.reservation, nowMs);
        PlacementResult r = pipeline.placeOn(new CycleState(cluster, job.spec(), profile, fence.excluded(), fence.only()), requireNode(node), true);
        if (r.ok()) start(job, r.allocation(), nowMs);
        else job.waitBecause(r.status());
        return r;
    }

    /**
     * Takes back a job that was already running with exactly these grants when the driver restarted (its
     * decision was recorded outside the engine: the service's store, a pod's annotations). Rejected, changing
     * nothing, when the job id is taken, the grants do not match the job's shape, or any GPU cannot hold its
     * grant any more (it would be handed out twice); the driver then queues the job with {@link #submit}.
     * A start time after {@code nowMs} (clock skew) is clamped to it.
     */
    public SubmitResult restoreRunning(JobSpec spec, Allocation allocation, long startedMs, long nowMs) {
        round.unsettle();
        advanceTo(nowMs);
        if (jobs.containsKey(spec.id())) return SubmitResult.rejected(spec.id(), Status.error(Status.RESTORE, "job id " + spec.id() + " already exists"));
        if (allocation.replicas().size() != spec.shape().replicas()
                || allocation.replicas().stream().anyMatch(r -> r.size() != spec.shape().gpusPerReplica() || r.stream().anyMatch(g -> g.node() != r.getFirst().node()))) {
            return SubmitResult.rejected(spec.id(), Status.error(Status.RESTORE, "job " + spec.id() + ": recorded GPUs do not match its shape " + spec.shape()));
        }
        for (GpuGrant g : allocation.grants()) {
            if (g.node() < 0 || g.node() >= cluster.nodeCount() || g.gpu() < 0 || g.gpu() >= cluster.node(g.node()).gpuCount()) {
                return SubmitResult.rejected(spec.id(), Status.error(Status.RESTORE, "job " + spec.id() + ": recorded GPU " + g.gpu() + " of node " + g.node() + " does not exist"));
            }
        }
        for (int node : allocation.replicaNodes()) {
            if (node < 0 || node >= cluster.nodeCount()) return SubmitResult.rejected(spec.id(), Status.error(Status.RESTORE, "job " + spec.id() + ": recorded node " + node + " does not exist"));
        }
        Allocation held = new Allocation(spec.id(), allocation.replicas(), spec.host(), allocation.replicaNodes());
        int mark = cluster.checkpoint();
        try {
            cluster.apply(held);
        } catch (IllegalStateException e) {
            cluster.rollback(mark);
            return SubmitResult.rejected(spec.id(), Status.error(Status.RESTORE, "job " + spec.id() + ": " + e.getMessage() + " (already held)"));
        }
        cluster.commit(mark);
        startedMs = Math.min(startedMs, nowMs);
        JobState job = new JobState(spec, seq++, startedMs, roundNote);
        jobs.put(spec.id(), job);
        running.put(job);
        job.status = JobStatus.RUNNING;
        job.hold(held);
        job.runStartMs = startedMs;
        job.firstStartMs = startedMs;
        ledger.charge(spec.tenant(), job.gpuUnits(), chargedMemory(job.allocation));
        if (policy instanceof RunObserver o) o.runStarted(job);
        round.runStarted(job);
        profile.observe(spec);
        return SubmitResult.accepted(spec.id());
    }

    /**
     * Replaces a pending job's spec (same id: its priority, allowed models, ...): it keeps its place in arrival order,
     * its wait so far, its hold and its group. Rejected, changing nothing, when the new spec could never run here.
     */
    public SubmitResult replacePending(JobSpec spec, long nowMs) {
        JobState old = require(spec.id());
        if (old.status != JobStatus.PENDING) throw new IllegalStateException("job " + spec.id() + " is " + old.status + ", not PENDING");
        Status why = Feasibility.check(cluster, spec, config.tenants());
        if (why != null) return SubmitResult.rejected(spec.id(), why);
        round.unsettle();
        advanceTo(nowMs);
        JobState job = old.replacedBy(spec);
        job.internShapeKey(shapeKeys);
        old.status = JobStatus.CANCELLED;   // a round that still holds the old state passes it over
        jobs.put(spec.id(), job);
        pending.put(job);        // same key: its place in arrival order stays
        pendingShapes.remove(old);
        pendingShapes.add(job);
        if (standing != null) {
            standing.remove(old);
            standing.add(job);
        }
        if (policy instanceof QueueObserver o) {
            o.dequeued(old);
            o.queued(job);
        }
        if (old.capGroup != null) {
            String group = old.capGroup;
            int cap = caps.cap(group);
            caps.leave(old);
            caps.join(job, group, cap);
        }
        round.arrived(job);
        profile.observe(spec, job.shapeKey());
        return SubmitResult.accepted(spec.id());
    }

    /**
     * Puts the job (pending or running) in a group of which at most {@code cap} run at once (a job array's
     * {@code %N}); every round checks it before placement, in every policy. The last cap given for a group holds.
     */
    public void capConcurrency(String jobId, String group, int cap) {
        round.unsettle();
        caps.join(require(jobId), group, cap);
    }

    /** How many jobs of the group run now. */
    public int runningInGroup(String group) {
        return caps.running(group);
    }

    // ---- advance reservations ----------------------------------------------------------------------

    /**
     * Reserves GPUs for a tenant over a window ({@link ReservationBook}: who may use them when, and what is refused).
     * Throws {@link io.gpupool.model.SpecException} naming the request's field when the reservation cannot be honoured:
     * an unknown tenant (where the configuration names tenants), node or model, more GPUs than the model has or than
     * overlapping reservations leave, a window that ends before it starts or is over, other tenants' running jobs still
     * on the GPUs at the start (unless the request ignores them: the answer then names them).
     */
    public ReservationBook.Planned reserve(ReservationRequest request, long nowMs) {
        advanceTo(nowMs);
        ReservationBook.Planned p = reservations.plan(request, cluster, running.values(),
                config.tenants().isEmpty() ? null : config.tenants().keySet(), nowMs);
        reservations.add(p.reservation(), cluster);
        round.forgetMemos();
        return p;
    }

    /**
     * Takes back a reservation a driver stored before its restart, as it was made (no check but that its GPUs exist);
     * returns how many of its GPUs the pool still has.
     */
    public int restoreReservation(Reservation r) {
        int n = reservations.add(r, cluster);
        round.forgetMemos();
        return n;
    }

    /** Deletes a reservation; false when there is none of that name. Jobs that run in it keep running. */
    public boolean cancelReservation(String name) {
        if (!reservations.remove(name)) return false;
        round.forgetMemos();
        return true;
    }

    /** Removes and returns the reservations whose window has ended by {@code nowMs} (they no longer limit anything). */
    public List<Reservation> expireReservations(long nowMs) {
        return reservations.expire(nowMs);
    }

    public List<Reservation> reservations() { return reservations.all(); }
    public Reservation reservation(String name) { return reservations.get(name); }

    /** Why a job with this spec could never run in the reservation (unknown, another tenant's, too few GPUs), or null. */
    public Status reservationMisfit(JobSpec spec, String reservation) {
        return reservations.targetMisfit(spec, reservation, cluster);
    }

    /**
     * The pending job runs in the reservation (Slurm's {@code --reservation}): only on its GPUs, only inside its
     * window; before the window it waits with a {@code reservation} reason, and never blocks the jobs behind it. The
     * driver checks the job fits the reservation first ({@link #reservationMisfit}); a job whose reservation is gone (it
     * ended, or was deleted while the job waited, or while a driver was down) waits, saying so.
     */
    public void useReservation(String jobId, String reservation) {
        JobState job = require(jobId);
        boolean queued = job.status == JobStatus.PENDING;
        if (queued) pendingShapes.remove(job);
        job.reservation = Objects.requireNonNull(reservation);
        if (queued) pendingShapes.add(job);
        round.unsettle();
    }

    /**
     * What a {@link #repack} did: the running GPU shares it took off and placed again, how many of them changed GPU
     * (each a migration: in a real service a checkpoint and a restart), the pending jobs it started, and the shares
     * it preempted (back in the queue; only a re-pack that may preempt leaves one out).
     */
    public record RepackResult(int shares, int moved, List<String> started, List<String> preempted) {
        public static final RepackResult NOTHING = new RepackResult(0, 0, List.of(), List.of());

        public RepackResult {
            started = List.copyOf(started);
            preempted = List.copyOf(preempted);
        }
    }

    /**
     * Re-packs the running GPU shares ({@link FewestMoves#movable}) together with the pending jobs: the shares are
     * taken off their GPUs (whole-GPU jobs stay put) and the placer places them and the pending jobs at once, every
     * share required and where it ran given as the start ({@link BatchPlacer.Batch}); the answer is relabelled to
     * move as few shares as it can ({@link FewestMoves}) and bound through the engine's own rules. All or nothing:
     * when a share would not find its place again, nothing changes. A share that changes GPU keeps running (its
     * run time goes on); a pending job placed starts. Nothing is done while nothing is pending (nothing to gain).
     */
    public RepackResult repack(BatchPlacer placer, long nowMs) {
        return repack(placer, 0, nowMs);
    }

    /**
     * As {@link #repack(BatchPlacer, long)}, but only the shares on the {@code gpus} shared GPUs with the most free
     * compute (the most stranded) are taken off; the others stay, and their GPUs' free room can still be used.
     * Fewer shares can move; {@code 0} takes every share.
     */
    public RepackResult repack(BatchPlacer placer, int gpus, long nowMs) {
        return repack(placer, gpus, false, nowMs);
    }

    /**
     * As {@link #repack(BatchPlacer, int, long)}; with {@code preempt} the shares are not required: the placer may
     * leave some out when that places more GPU demand in all (the current placement is still its start, so it
     * can always answer that). A share the answer leaves out is preempted as a round preempts: back in the queue,
     * its preemption counted, its attained service kept. The answer is kept only if it allocates more GPU demand
     * than before when it preempts (never less in any case); otherwise nothing changes.
     */
    public RepackResult repack(BatchPlacer placer, int gpus, boolean preempt, long nowMs) {
        if (gpus < 0) throw new IllegalArgumentException("gpus must be >= 0, got " + gpus);
        round.unsettle();
        advanceTo(nowMs);
        List<JobState> shares = running.values().stream().filter(j -> FewestMoves.movable(j.spec())).toList();
        if (gpus > 0) shares = FewestMoves.onMostStranded(cluster, shares.stream().collect(java.util.stream.Collectors.toMap(
                JobState::id, j -> j.allocation, (a, b) -> a, java.util.LinkedHashMap::new)), gpus).stream().map(jobs::get).toList();
        List<JobState> waiting = pending.values().stream()
                .filter(j -> !j.spec().cpuOnly() && j.holdReason == null && quotaReason(j) == null).toList();
        if (waiting.isEmpty() || shares.isEmpty()) return RepackResult.NOTHING;
        Map<String, Allocation> before = new java.util.LinkedHashMap<>();
        Map<String, JobSpec> specs = new HashMap<>();
        List<JobSpec> batch = new ArrayList<>();
        for (JobState j : shares) {
            before.put(j.id(), j.allocation);
            specs.put(j.id(), j.spec());
            batch.add(j.spec());
        }
        for (JobState j : waiting) {
            specs.put(j.id(), j.spec());
            batch.add(j.spec());
        }
        int mark = cluster.checkpoint();
        boolean kept = false;
        try {
            for (JobState j : shares) cluster.release(j.allocation);
            Map<String, Allocation> answer = placer.plan(new BatchPlacer.Batch(cluster, pipeline, profile, batch,
                    preempt ? Set.of() : before.keySet(), before));
            Map<String, Allocation> bound = bindRepack(FewestMoves.relabel(cluster, specs, answer, before), shares, waiting, preempt, nowMs);
            if (bound == null) bound = bindRepack(answer, shares, waiting, preempt, nowMs);   // the relabelling is only a preference
            if (bound == null) return RepackResult.NOTHING;
            Map<String, Allocation> placed = bound;
            long demandBefore = 0, demandAfter = 0;
            for (JobState j : shares) demandBefore += j.spec().gpuMilliDemand();
            for (String id : bound.keySet()) demandAfter += specs.get(id).gpuMilliDemand();
            List<JobState> left = shares.stream().filter(j -> !placed.containsKey(j.id())).toList();
            // a re-pack never allocates less, and preempts only to allocate more
            if (demandAfter < demandBefore || (!left.isEmpty() && demandAfter == demandBefore)) return RepackResult.NOTHING;
            cluster.commit(mark);
            kept = true;
            Map<String, Allocation> stayed = new java.util.LinkedHashMap<>(before);
            stayed.keySet().retainAll(bound.keySet());
            int moved = FewestMoves.moves(stayed, bound);
            List<String> preempted = new ArrayList<>();
            for (JobState j : left) {
                requeueReleased(j, nowMs);   // its GPUs were released above, and the answer gave them to others
                if (preemptedHold != null) {   // as a round holds its victims (Jobs.hold)
                    j.keepRestReason();
                    j.holdReason = preemptedHold;
                }
                preempted.add(j.id());
            }
            for (JobState j : shares) {
                Allocation now = bound.get(j.id());
                if (now == null) continue;
                ledger.charge(j.spec().tenant(), 0, chargedMemory(now) - chargedMemory(j.allocation));
                j.hold(now);
            }
            List<String> started = new ArrayList<>();
            for (JobState j : waiting) {
                if (!bound.containsKey(j.id())) continue;
                start(j, bound.get(j.id()), nowMs);
                started.add(j.id());
            }
            return new RepackResult(shares.size(), moved, started, preempted);
        } finally {
            if (!kept) cluster.rollback(mark);
        }
    }

    /**
     * Binds a re-pack answer through the pipeline (the filters and GPU rules, then the cluster's capacity checks):
     * every share, then the pending jobs that fit. Null, with the cluster as it was, when a share does not (or, unless
     * {@code preempt}, when the answer leaves one out).
     */
    private Map<String, Allocation> bindRepack(Map<String, Allocation> answer, List<JobState> shares, List<JobState> waiting,
                                               boolean preempt, long nowMs) {
        int mark = cluster.checkpoint();
        Map<String, Allocation> bound = new HashMap<>();
        for (List<JobState> group : List.of(shares, waiting)) {
            for (JobState j : group) {
                Allocation a = answer.get(j.id());
                if (a == null && group == shares && !preempt) {
                    cluster.rollback(mark);
                    return null;
                }
                if (a == null) continue;
                Fence fence = reservations.fence(j, j.reservation, nowMs);
                PlacementResult r = pipeline.placeGiven(new CycleState(cluster, j.spec(), profile, fence.excluded(), fence.only()), a, true);
                if (r.ok()) bound.put(j.id(), r.allocation());
                else if (group == shares) {
                    cluster.rollback(mark);
                    return null;
                }
            }
        }
        cluster.commit(mark);
        return bound;
    }

    /** Drops an ended job from the job table, so a long-running driver does not keep every job forever. */
    public boolean forget(String jobId) {
        JobState job = jobs.get(jobId);
        if (job == null || !job.status.terminal()) return false;
        if (job.capGroup != null) caps.leave(job);
        jobs.remove(jobId);
        return true;
    }

    // ---- what-ifs for drivers that choose the node themselves -----------------------------------

    /**
     * Filter and score for one replica of a job that is not queued (kube-scheduler's extender): of the given nodes,
     * those that can hold it now, in the given order, each scored 0..{@code maxScore} by the placement's scorers
     * (the best gets maxScore, the worst 0; all get maxScore when they score alike). Unknown nodes are left out.
     */
    public Map<String, Long> filterAndScore(JobSpec job, List<String> nodes, long maxScore) {
        return NodeQueries.filterAndScore(cluster, pipeline, profile, job, nodes, maxScore);
    }

    /**
     * Whether one replica of a job that is not queued would fit on the node if these jobs were gone (a what-if: the
     * state is left as it was). Ids of jobs that are not running are ignored.
     */
    public boolean wouldFitWithout(JobSpec job, String node, Collection<String> goneJobIds) {
        Set<JobState> gone = new java.util.LinkedHashSet<>();
        for (String id : goneJobIds) if (jobs.containsKey(id)) gone.add(jobs.get(id));
        return NodeQueries.fitsWithout(cluster, pipeline, profile, job, requireNode(node), gone);
    }

    /** Adds a filter after the default ones, for every later placement (a driver's own node rules). */
    public void addFilter(FilterPlugin filter) {
        driverFilters.add(Objects.requireNonNull(filter));
        reconfigure(config);
    }

    // ---- scheduling -----------------------------------------------------------------------------

    /** One scheduling round at {@code nowMs} ({@link Round}). */
    public RoundResult schedule(long nowMs) {
        advanceTo(nowMs);
        if (reservations.boundaryIn(lastRoundMs, nowMs)) round.forgetMemos();   // a window began or ended
        lastRoundMs = nowMs;
        return round.run(context(nowMs));
    }

    /**
     * When the scheduler wants another round although nothing arrives or ends: the policy's (e.g. LAS demotion), or,
     * with jobs queued, the next start or end of a reservation's window.
     */
    public OptionalLong nextReevaluationMs(long nowMs) {
        OptionalLong p = running.isEmpty() ? OptionalLong.empty() : policy.nextReevaluationMs(context(nowMs));
        if (pending.isEmpty() || reservations.isEmpty()) return p;
        long window = reservations.nextBoundaryAfter(nowMs);
        if (window == Long.MAX_VALUE) return p;
        return OptionalLong.of(p.isPresent() ? Math.min(p.getAsLong(), window) : window);
    }

    // ---- nodes ----------------------------------------------------------------------------------

    /** Cordon (no new work) or uncordon a node. */
    public void setCordoned(String node, boolean cordoned) {
        round.unsettle();
        cluster.setCordoned(requireNode(node), cordoned);
    }

    public void setGpuHealthy(String node, int gpu, boolean healthy) {
        round.unsettle();
        int id = requireNode(node);
        if (gpu < 0 || gpu >= cluster.node(id).gpuCount()) throw new IllegalArgumentException("node " + node + " has no GPU " + gpu);
        cluster.setHealthy(id, gpu, healthy);
    }

    /** Adds a node to the pool (an agent joining); its GPUs count toward tenants' shares from now on. */
    public void addNode(io.gpupool.model.NodeSpec spec) {
        round.unsettle();
        cluster.addNode(spec);
        ledger.setCapacity(cluster.totalMilli() / 1000.0, cluster.totalMemoryMib());
    }

    // ---- views ----------------------------------------------------------------------------------

    /** Tests: every round walks its whole queue, as before rounds stopped once only refusals were left or were quiet. */
    void walkWholeQueues() { round.walkWholeQueues(); }
    /** Tests: rounds not walked because only time passed and no rank moved that matters (QuietRounds). */
    long quietRounds() { return round.quietRounds(); }
    /** Tests: full rounds whose walk stopped once only refusals were left. */
    long walksStopped() { return round.walksStopped(); }
    long[] shapesPassedOver() { return round.shapesPassedOver(); }
    long plansSkippedBySize() { return round.plansSkippedBySize(); }

    public JobState job(String id) { return jobs.get(id); }
    public Collection<JobState> pendingJobs() { return Collections.unmodifiableCollection(pending.values()); }
    public Collection<JobState> runningJobs() { return Collections.unmodifiableCollection(running.values()); }
    public Collection<JobState> allJobs() { return Collections.unmodifiableCollection(jobs.values()); }
    /**
     * The cluster's capacity state, read-only for drivers: every change (grants, releases, what-if checkpoints and
     * rollbacks, health, cordons) goes through this class, which keeps it in step with the jobs and the ledger.
     */
    public ClusterState cluster() { return cluster; }
    public TenantLedger ledger() { return ledger; }
    public SchedulerConfig config() { return config; }
    public QueuePolicy policy() { return policy; }
    public PlacementPipeline pipeline() { return pipeline; }
    public WorkloadProfile workloadProfile() { return profile; }
    public RuntimePredictor predictor() { return predictor; }

    /**
     * Recomputes every GPU's use from the running jobs' allocations and checks it against the cluster
     * state and the sharing rules. Throws on any mismatch; tests call it after every step.
     */
    public void checkConsistency() {
        ConsistencyCheck.check(cluster, running.values());
    }

    // ---- internals ------------------------------------------------------------------------------

    private PolicyContext context(long nowMs) {
        return new PolicyContext(nowMs, config, cluster, ledger, predictor, oracle, running.values());
    }

    private void advanceTo(long nowMs) {
        if (nowMs < lastNowMs) throw new IllegalArgumentException("time went backwards: " + nowMs + " < " + lastNowMs);
        lastNowMs = nowMs;
        ledger.advance(nowMs);
    }

    private JobState require(String id) {
        JobState j = jobs.get(id);
        if (j == null) throw new IllegalArgumentException("no job " + id);
        return j;
    }

    private int requireNode(String name) {
        Integer id = cluster.nodeId(name);
        if (id == null) throw new IllegalArgumentException("no node " + name);
        return id;
    }

    private Status quotaReason(JobState job) {
        Status capped = caps.refusal(job);
        if (capped != null) return capped;
        if (job.reservation != null) {
            Status notYet = reservations.targetRefusal(job.reservation, lastNowMs);
            if (notYet != null) return notYet;
        }
        if (!anyTenantLimit) return null;
        TenantConfig t = config.tenants().get(job.spec().tenant());
        if (t == null || !t.hasLimit()) return null;
        double held = ledger.account(t.name()).gpus();
        if (held + job.gpuUnits() <= t.limitGpus() + 1e-9) return null;
        long limit = Math.round(t.limitGpus() * 1000);
        return Status.insufficient(Status.QUOTA, io.gpupool.engine.status.Resource.GPU_COMPUTE, job.spec().gpuMilliDemand(),
                Math.max(0, limit - Math.round(held * 1000)), limit,
                "tenant " + t.name() + " holds " + Feasibility.fmt(held) + " of its limit of " + Feasibility.fmt(t.limitGpus()) + " GPUs");
    }

    private void start(JobState job, Allocation a, long nowMs) {
        job.keepRestReason();   // a job preempted later shows the reason it had
        pending.remove(job.id());
        pendingShapes.remove(job);
        if (standing != null) standing.remove(job);
        if (policy instanceof QueueObserver o) o.dequeued(job);
        running.put(job);
        job.status = JobStatus.RUNNING;
        job.hold(a);
        job.runStartMs = nowMs;
        if (job.firstStartMs < 0) job.firstStartMs = nowMs;
        job.waitedMs += nowMs - job.queuedSinceMs;
        caps.started(job);
        ledger.charge(job.spec().tenant(), job.gpuUnits(), chargedMemory(a));
        if (policy instanceof RunObserver o) o.runStarted(job);
        round.runStarted(job);
    }

    /** Releases a running job's GPUs and banks its run time. */
    private void stop(JobState job, long nowMs) {
        cluster.release(job.allocation);
        stopReleased(job, nowMs);
    }

    /** As {@link #stop}, for a job whose GPUs the cluster no longer holds for it (a re-pack released them). */
    private void stopReleased(JobState job, long nowMs) {
        ledger.charge(job.spec().tenant(), -job.gpuUnits(), -chargedMemory(job.allocation));
        job.attainedBeforeMs += nowMs - job.runStartMs;
        job.runStartMs = -1;
        job.hold(null);
        running.remove(job.id());
        caps.stopped(job);
        round.runEnded(job);
        if (policy instanceof RunObserver o) o.runEnded(job);
    }

    private void requeue(JobState job, long nowMs) {
        stop(job, nowMs);
        enqueueAgain(job, nowMs);
    }

    /** As {@link #requeue}, for a job whose GPUs a re-pack released and gave to others. */
    private void requeueReleased(JobState job, long nowMs) {
        stopReleased(job, nowMs);
        enqueueAgain(job, nowMs);
    }

    private void enqueueAgain(JobState job, long nowMs) {
        job.status = JobStatus.PENDING;
        job.queuedSinceMs = nowMs;
        job.waitedBeforeQueueMs = job.waitedMs;
        job.preemptions++;
        job.queuedAgain();
        pending.put(job);
        pendingShapes.add(job);
        if (standing != null) standing.add(job);
        if (policy instanceof QueueObserver o) o.queued(job);
    }

    /** GPU memory charged to the tenant: at most the physical memory of each GPU. */
    private long chargedMemory(Allocation a) {
        long m = 0;
        for (GpuGrant g : a.grants()) m += Math.min(g.memoryMib(), cluster.node(g.node()).model().memoryMib());
        return m;
    }

    /** The job table as a round sees it. */
    private final class Jobs implements RoundJobs {
        @Override public Collection<JobState> pending() { return pending.values(); }
        @Override public Collection<JobState> running() { return running.values(); }
        @Override public Status quotaReason(JobState job) { return Scheduler.this.quotaReason(job); }
        @Override public Fence fence(JobState job, long nowMs) { return reservations.fence(job, job.reservation, nowMs); }
        @Override public void start(JobState job, Allocation a, long nowMs) { Scheduler.this.start(job, a, nowMs); }
        @Override public void requeue(JobState job, long nowMs) { Scheduler.this.requeue(job, nowMs); }
        @Override public void hold(JobState job, String reason) {
            job.keepRestReason();
            job.holdReason = reason;
        }
        @Override public void waits(JobState job, Status why) { job.waitBecause(why); }
        @Override public void note(JobState job, String note) { job.waitBecause(note); }

        @Override
        public void beginFullRound() {
            roundNote.number++;
            roundNote.unreached = "not reached in the last round";
        }

        @Override public void unreached(String reason) { roundNote.unreached = reason; }

        @Override public Set<String> pendingShapes() { return pendingShapes.shapes(); }

        @Override
        public boolean onlyPlacementRefuses() {
            // no array cap, tenant limit or reservation window: quotaReason is null and the fence NONE for every job
            return caps.none() && !anyTenantLimit && reservations.isEmpty() && pendingShapes.inReservation() == 0;
        }

        @Override public void restWaits(Map<String, Status> byShape) { roundNote.restWaits(byShape); }
    }
}
