package io.gpupool.engine;

import io.gpupool.engine.batch.BatchPlacer;
import io.gpupool.engine.placement.CycleState;
import io.gpupool.engine.placement.FilterPlugin;
import io.gpupool.engine.placement.PlacementPipeline;
import io.gpupool.engine.placement.PlacementResult;
import io.gpupool.engine.placement.ReplicaDemand;
import io.gpupool.engine.placement.WorkloadProfile;
import io.gpupool.engine.policy.BlockingMode;
import io.gpupool.engine.policy.HistoryMedianPredictor;
import io.gpupool.engine.policy.JobQueue;
import io.gpupool.engine.policy.PolicyContext;
import io.gpupool.engine.policy.PolicyRegistry;
import io.gpupool.engine.policy.QueuePolicy;
import io.gpupool.engine.policy.RuntimeOracle;
import io.gpupool.engine.policy.RuntimePredictor;
import io.gpupool.engine.policy.StandingQueue;
import io.gpupool.engine.state.Allocation;
import io.gpupool.engine.state.ClusterState;
import io.gpupool.engine.state.GpuGrant;
import io.gpupool.engine.state.NodeState;
import io.gpupool.engine.status.Status;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.JobSpec;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
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
 * <p>A round ({@link #schedule}) asks the policy for the order of pending jobs and walks it: each job
 * goes through the placement pipeline; one that does not fit may preempt (preemptive policies), then
 * blocks (strict), gets a reservation that later jobs must not delay (backfill), or is passed over.
 */
public final class Scheduler {
    private final ClusterState cluster;
    private final TenantLedger ledger;
    private final WorkloadProfile profile = new WorkloadProfile();
    private final Map<String, JobState> jobs = new HashMap<>();
    private final Map<String, JobState> pending = new LinkedHashMap<>();
    private final Map<String, JobState> running = new LinkedHashMap<>();
    private SchedulerConfig config;
    private QueuePolicy policy;
    private PlacementPipeline pipeline;
    private StandingQueue standing;     // pending jobs kept in order, for policies with a standing order
    private RuntimePredictor predictor;
    private final RuntimeOracle oracle;
    private BatchPlacer batchPlacer;
    private final List<FilterPlugin> driverFilters = new ArrayList<>();
    private final JobState.RoundNote round = new JobState.RoundNote();
    private long seq;
    private long lastNowMs = Long.MIN_VALUE;
    // Shapes whose placement failed when the cluster was at version blockedAtVersion, with the reason. While
    // the state is unchanged they fail again: a blocked head costs O(1) per round until capacity changes
    // (long replays have millions of rounds where only arrivals happen).
    private final Map<String, Status> blockedShapes = new HashMap<>();
    private long blockedAtVersion = -1;
    // A settled scheduler: the last round started and preempted nothing, and since then only jobs arrived
    // (every other change clears the flag) with the cluster still at settledVersion. For a policy whose
    // refusals do not depend on time (QueuePolicy.arrivalsOnlyWhenSettled), the next round need only try the
    // arrivals: every older job would be refused again. A service with tens of thousands of queued jobs on a
    // full pool then pays per round for what arrived, not for the whole queue.
    private boolean settled;
    private long settledVersion = -1;
    private final List<JobState> arrivals = new ArrayList<>();
    private String preemptedHold; // non-null: a job a round preempts is held with this reason (holdPreemptedJobs)

    /** A reservation of GPUs for a blocked job from {@code atMs} (EASY backfill). */
    private record Reservation(String jobId, long atMs, Set<Long> gpus) {}

    public Scheduler(ClusterSpec spec, SchedulerConfig config) {
        this(spec, config, null);
    }

    /** @param oracle true run times, for the clairvoyant policy in simulation; null elsewhere */
    public Scheduler(ClusterSpec spec, SchedulerConfig config, RuntimeOracle oracle) {
        this.cluster = new ClusterState(spec);
        this.oracle = oracle;
        this.predictor = new HistoryMedianPredictor(config.defaultRuntimeMs());
        this.ledger = new TenantLedger(config.tenants(), cluster.totalMilli() / 1000.0, cluster.totalMemoryMib(),
                config.fairShareHalfLifeMs(), 0);
        reconfigure(config);
    }

    /** Applies a new policy, placement and tenant configuration; running jobs keep their GPUs. */
    public void reconfigure(SchedulerConfig newConfig) {
        settled = false;
        QueuePolicy p = PolicyRegistry.create(newConfig.policy());
        if (p.name().equals("srtf-oracle") && oracle == null) {
            throw new io.gpupool.model.SpecException("scheduler", "policy", "srtf-oracle needs true run times, which only the simulator knows");
        }
        PlacementPipeline pl = new PlacementPipeline(newConfig.placement(), driverFilters);
        this.config = newConfig;
        this.policy = p;
        this.standing = null;
        if (p.standingOrder(context(lastNowMs)) != null) {
            standing = new StandingQueue(p, context(lastNowMs));
            for (JobState j : pending.values()) standing.add(j);
        }
        this.pipeline = pl;
        blockedAtVersion = -1;
        ledger.reconfigure(newConfig.tenants(), newConfig.fairShareHalfLifeMs());
    }

    public void setPredictor(RuntimePredictor predictor) {
        settled = false;
        this.predictor = Objects.requireNonNull(predictor);
    }

    /** Batch mode: each round first starts what the placer picks from the head of the queue; null = off. */
    public void setBatchPlacer(BatchPlacer placer) {
        settled = false;
        this.batchPlacer = placer;
    }

    // ---- job lifecycle --------------------------------------------------------------------------

    /** Queues the job, or rejects it with the reason when it could never run on this pool. */
    public SubmitResult submit(JobSpec spec, long nowMs) {
        advanceTo(nowMs);
        if (jobs.containsKey(spec.id())) return SubmitResult.rejected(spec.id(), Status.error(Status.SUBMIT, "job id " + spec.id() + " already exists"));
        JobState job = new JobState(spec, seq++, nowMs, round);
        Status why = Feasibility.check(cluster, spec, config.tenants());
        jobs.put(spec.id(), job);
        if (why != null) {
            job.status = JobStatus.REJECTED;
            job.waitBecause(why);
            job.endMs = nowMs;
            return SubmitResult.rejected(spec.id(), why);
        }
        pending.put(spec.id(), job);
        if (standing != null) standing.add(job);
        arrivals.add(job);
        profile.observe(spec);
        return SubmitResult.accepted(spec.id());
    }

    /** A running job finished. */
    public void complete(String jobId, long nowMs) {
        settled = false;
        advanceTo(nowMs);
        JobState job = require(jobId);
        if (job.status != JobStatus.RUNNING) throw new IllegalStateException("job " + jobId + " is " + job.status + ", not RUNNING");
        stop(job, nowMs);
        job.status = JobStatus.COMPLETED;
        job.endMs = nowMs;
        predictor.observe(job.spec(), job.attainedMs(nowMs));
    }

    /** Cancels a pending or running job; false when it had already ended. */
    public boolean cancel(String jobId, long nowMs) {
        settled = false;
        advanceTo(nowMs);
        JobState job = require(jobId);
        if (job.status.terminal()) return false;
        if (job.status == JobStatus.RUNNING) stop(job, nowMs);
        else {
            job.waitedMs += nowMs - job.queuedSinceMs;
            pending.remove(jobId);
            if (standing != null) standing.remove(job);
        }
        job.status = JobStatus.CANCELLED;
        job.endMs = nowMs;
        return true;
    }

    /** Stops a running job and puts it back in the queue with its attained service (drain, admin). */
    public void preempt(String jobId, long nowMs) {
        settled = false;
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
        job.holdReason = Objects.requireNonNull(reason);
    }

    /**
     * Holds every job a round preempts, with this reason, until the driver calls {@link #releaseHold}: for a driver
     * whose preempted attempts stop some time after the decision (the service's agents stop processes), so that the
     * job does not start again, here or elsewhere, while its last attempt may still run. Null (the default, the
     * simulator's) lets a preempted job start again in the same round.
     */
    public void holdPreemptedJobs(String reason) {
        this.preemptedHold = reason;
    }

    /** Lets a held job be placed again from the next round on; false when it was not held. */
    public boolean releaseHold(String jobId) {
        JobState job = require(jobId);
        if (job.holdReason == null) return false;
        job.holdReason = null;
        settled = false; // a round of arrivals only would pass it over
        return true;
    }

    /**
     * Starts a pending job on the one node a caller chose (kube-scheduler's bind, a pod already bound there):
     * the tenant's hard limit, the filters and the GPU policy apply as in a round; only the choice of node is
     * the caller's. On failure the job stays pending and the result says why.
     */
    public PlacementResult startOn(String jobId, String node, long nowMs) {
        settled = false;
        advanceTo(nowMs);
        JobState job = require(jobId);
        if (job.status != JobStatus.PENDING) throw new IllegalStateException("job " + jobId + " is " + job.status + ", not PENDING");
        if (job.holdReason != null) return PlacementResult.failed(Status.held(job.holdReason));
        Status why = quotaReason(job);
        if (why != null) return PlacementResult.failed(why);
        PlacementResult r = pipeline.placeOn(cycle(job, null), requireNode(node), true);
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
        settled = false;
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
        JobState job = new JobState(spec, seq++, startedMs, round);
        jobs.put(spec.id(), job);
        running.put(spec.id(), job);
        job.status = JobStatus.RUNNING;
        job.allocation = held;
        job.runStartMs = startedMs;
        job.firstStartMs = startedMs;
        ledger.charge(spec.tenant(), job.gpuUnits(), chargedMemory(job.allocation));
        profile.observe(spec);
        return SubmitResult.accepted(spec.id());
    }

    /** Drops an ended job from the job table, so a long-running driver does not keep every job forever. */
    public boolean forget(String jobId) {
        JobState job = jobs.get(jobId);
        if (job == null || !job.status.terminal()) return false;
        jobs.remove(jobId);
        return true;
    }

    /** Adds a filter after the default ones, for every later placement (a driver's own node rules). */
    public void addFilter(FilterPlugin filter) {
        driverFilters.add(Objects.requireNonNull(filter));
        reconfigure(config);
    }

    // ---- scheduling -----------------------------------------------------------------------------

    /** One scheduling round at {@code nowMs}. */
    public RoundResult schedule(long nowMs) {
        advanceTo(nowMs);
        boolean onlyArrivals = settled && cluster.version() == settledVersion && policy.arrivalsOnlyWhenSettled()
                && standing == null && batchPlacer == null && pipeline.dependsOnlyOnClusterState();
        if (!onlyArrivals) {
            // a full round: every pending job gets this round's reason (older jobs keep theirs in a round of arrivals)
            round.number++;
            round.unreached = "not reached in the last round";
        }
        PolicyContext ctx = context(nowMs);
        List<String> started = new ArrayList<>();
        if (batchPlacer != null) startBatch(ctx, nowMs, started);
        Collection<JobState> candidates = onlyArrivals ? arrivals.stream().filter(j -> j.status == JobStatus.PENDING).toList() : pending.values();
        JobQueue queue = standing != null ? standing.round(ctx) : policy.queue(ctx, candidates);
        RoundResult result;
        try {
            result = dispatch(ctx, queue, nowMs, started);
        } finally {
            if (standing != null) standing.endRound();
        }
        arrivals.clear();
        settled = result.started().isEmpty() && result.preempted().isEmpty();
        settledVersion = cluster.version();
        return result;
    }

    /** The dispatcher loop of one round over the policy's queue ({@code started}: what batch mode started). */
    private RoundResult dispatch(PolicyContext ctx, JobQueue queue, long nowMs, List<String> started) {
        List<String> preempted = new ArrayList<>();
        Map<String, Status> failedShapes = new HashMap<>();
        Set<String> noVictims = new HashSet<>();
        PreemptionPlanner planner = null;
        Reservation reservation = null;
        int backfillLeft = config.backfillDepth();
        JobState job;
        while ((job = queue.poll()) != null) {
            if (job.status != JobStatus.PENDING || job.holdReason != null) continue;
            if (!policy.preemptive() && cluster.usedMilli() >= cluster.totalMilli()) {
                round.unreached = "waits: every GPU is in use";
                break;
            }
            Status why = quotaReason(job);
            if (why == null) why = Status.admission(policy.admit(ctx, job));
            if (why != null) {
                job.waitBecause(why);
                continue;
            }
            if (reservation != null) {
                if (backfillLeft-- <= 0) {
                    round.unreached = "waits: not considered for backfill (more than " + config.backfillDepth() + " jobs behind " + reservation.jobId() + ")";
                    break;
                }
                boolean endsBeforeReservation = nowMs + ctx.expectedRuntimeMs(job) <= reservation.atMs();
                PlacementResult r = pipeline.place(cycle(job, endsBeforeReservation ? null : reservation.gpus()), true);
                if (r.ok()) {
                    start(job, r.allocation(), nowMs);
                    started.add(job.id());
                    queue.started(job);
                } else {
                    job.waitBecause(Status.backfill(reservation.jobId(), r.status()));
                }
                continue;
            }
            if (job.shapeKey == null) job.shapeKey = shapeKey(job.spec());
            String shape = job.shapeKey;
            Status reason = failedShapes.get(shape);
            if (reason == null) reason = knownFailure(shape);
            if (reason == null) {
                PlacementResult r = pipeline.place(cycle(job, null), true);
                if (r.ok()) {
                    start(job, r.allocation(), nowMs);
                    started.add(job.id());
                    queue.started(job);
                    continue;
                }
                reason = r.status();
                failedShapes.put(shape, reason);
                rememberFailure(shape, reason);
            }
            // later jobs of the same shape and tenant have no more victims to choose from
            String victimKey = shape + "|" + job.spec().tenant();
            if (policy.preemptive() && !noVictims.contains(victimKey) && policy.mayPreemptAny(ctx, job)) {
                if (planner == null) planner = new PreemptionPlanner(ctx, policy, pipeline, profile, running.values());
                List<JobState> victims = planner.plan(job);
                if (victims == null) {
                    noVictims.add(victimKey);
                } else {
                    for (JobState v : victims) {
                        requeue(v, nowMs);
                        v.holdReason = preemptedHold;
                        v.waitBecause("preempted for " + job.id());
                        preempted.add(v.id());
                        queue.requeue(v);
                    }
                    failedShapes.clear();
                    noVictims.clear();
                    PlacementResult r = pipeline.place(cycle(job, null), true);
                    if (!r.ok()) throw new IllegalStateException("job " + job.id() + " does not fit after preempting " + victims);
                    start(job, r.allocation(), nowMs);
                    started.add(job.id());
                    queue.started(job);
                    continue;
                }
            }
            job.waitBecause(reason);
            if (policy.blocking() == BlockingMode.STRICT) {
                round.unreached = "queued behind " + job.id() + " (strict FCFS)";
                break;
            } else if (policy.blocking() == BlockingMode.BACKFILL) {
                reservation = reserve(ctx, job);
                if (reservation != null) {
                    job.waitBecause(reason.within("GPUs reserved from t=" + reservation.atMs() / 1000.0 + "s (expected); "));
                }
            }
        }
        return new RoundResult(started, preempted);
    }

    /** When the policy wants another round although nothing arrives or ends (e.g. LAS demotion). */
    public OptionalLong nextReevaluationMs(long nowMs) {
        if (running.isEmpty()) return OptionalLong.empty();
        return policy.nextReevaluationMs(context(nowMs));
    }

    // ---- nodes ----------------------------------------------------------------------------------

    /** Cordon (no new work) or uncordon a node. */
    public void setCordoned(String node, boolean cordoned) {
        settled = false;
        cluster.setCordoned(requireNode(node), cordoned);
    }

    public void setGpuHealthy(String node, int gpu, boolean healthy) {
        settled = false;
        int id = requireNode(node);
        if (gpu < 0 || gpu >= cluster.node(id).gpuCount()) throw new IllegalArgumentException("node " + node + " has no GPU " + gpu);
        cluster.setHealthy(id, gpu, healthy);
    }

    /** Adds a node to the pool (an agent joining); its GPUs count toward tenants' shares from now on. */
    public void addNode(io.gpupool.model.NodeSpec spec) {
        settled = false;
        cluster.addNode(spec);
        ledger.setCapacity(cluster.totalMilli() / 1000.0, cluster.totalMemoryMib());
    }

    // ---- views ----------------------------------------------------------------------------------

    public JobState job(String id) { return jobs.get(id); }
    public Collection<JobState> pendingJobs() { return Collections.unmodifiableCollection(pending.values()); }
    public Collection<JobState> runningJobs() { return Collections.unmodifiableCollection(running.values()); }
    public Collection<JobState> allJobs() { return Collections.unmodifiableCollection(jobs.values()); }
    /** The cluster's capacity state; read it, change it only through this class. */
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
        Map<Long, long[]> use = new HashMap<>();
        long[][] hostUse = new long[cluster.nodeCount()][2];
        for (JobState j : running.values()) {
            if (j.allocation == null) throw new IllegalStateException("running job without allocation: " + j.id());
            if (j.allocation.replicas().size() != j.spec().shape().replicas()) throw new IllegalStateException("gang not whole: " + j.id());
            if (!j.allocation.hostPerReplica().equals(j.spec().host())) throw new IllegalStateException("host resources not as asked: " + j.id());
            for (int r = 0; r < j.allocation.replicas().size(); r++) {
                List<GpuGrant> rep = j.allocation.replicas().get(r);
                int node = j.allocation.nodeOf(r);
                hostUse[node][0] += j.spec().host().cpuMilli();
                hostUse[node][1] += j.spec().host().memoryMib();
                if (rep.size() != j.spec().shape().gpusPerReplica()) throw new IllegalStateException("replica size wrong: " + j.id());
                for (GpuGrant g : rep) {
                    if (g.node() != node) throw new IllegalStateException("replica spans nodes: " + j.id());
                    long[] u = use.computeIfAbsent(CycleState.gpuKey(g.node(), g.gpu()), k -> new long[4]);
                    u[0] += g.milli();
                    u[1] += g.memoryMib();
                    u[2]++;
                    if (g.exclusive()) u[3]++;
                }
            }
        }
        for (NodeState n : cluster.nodes()) {
            long[] h = hostUse[n.id()];
            if (h[0] > n.spec().cpuMilli() || h[1] > n.spec().memoryMib()) throw new IllegalStateException(n.name() + " host CPU or memory over capacity");
            if (n.freeCpuMilli() != n.spec().cpuMilli() - h[0] || n.freeHostMemoryMib() != n.spec().memoryMib() - h[1]) {
                throw new IllegalStateException(n.name() + " host state does not match allocations");
            }
            for (int g = 0; g < n.gpuCount(); g++) {
                long[] u = use.getOrDefault(CycleState.gpuKey(n.id(), g), new long[4]);
                if (u[0] > 1000) throw new IllegalStateException(n.name() + "/" + g + " compute over capacity: " + u[0]);
                if (u[1] > n.memoryCapacityMib()) throw new IllegalStateException(n.name() + "/" + g + " memory over capacity: " + u[1]);
                if (u[2] > n.spec().splitCount()) throw new IllegalStateException(n.name() + "/" + g + " more tasks than split count");
                if (u[3] > 0 && u[2] > 1) throw new IllegalStateException(n.name() + "/" + g + " exclusive GPU shared");
                if (n.freeMilli(g) != 1000 - u[0] || n.freeMemoryMib(g) != n.memoryCapacityMib() - u[1] || n.tasks(g) != u[2]) {
                    throw new IllegalStateException(n.name() + "/" + g + " state does not match allocations");
                }
            }
        }
    }

    // ---- internals ------------------------------------------------------------------------------

    private PolicyContext context(long nowMs) {
        return new PolicyContext(nowMs, config, cluster, ledger, predictor, oracle, running.values());
    }

    private CycleState cycle(JobState job, Set<Long> excluded) {
        return new CycleState(cluster, job.spec(), profile, excluded);
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
        pending.remove(job.id());
        if (standing != null) standing.remove(job);
        running.put(job.id(), job);
        job.status = JobStatus.RUNNING;
        job.allocation = a;
        job.runStartMs = nowMs;
        if (job.firstStartMs < 0) job.firstStartMs = nowMs;
        job.waitedMs += nowMs - job.queuedSinceMs;
        ledger.charge(job.spec().tenant(), job.gpuUnits(), chargedMemory(a));
    }

    /** Releases a running job's GPUs and banks its run time. */
    private void stop(JobState job, long nowMs) {
        cluster.release(job.allocation);
        ledger.charge(job.spec().tenant(), -job.gpuUnits(), -chargedMemory(job.allocation));
        job.attainedBeforeMs += nowMs - job.runStartMs;
        job.runStartMs = -1;
        job.allocation = null;
        running.remove(job.id());
    }

    private void requeue(JobState job, long nowMs) {
        stop(job, nowMs);
        job.status = JobStatus.PENDING;
        job.queuedSinceMs = nowMs;
        job.preemptions++;
        pending.put(job.id(), job);
        if (standing != null) standing.add(job);
    }

    /** GPU memory charged to the tenant: at most the physical memory of each GPU. */
    private long chargedMemory(Allocation a) {
        long m = 0;
        for (GpuGrant g : a.grants()) m += Math.min(g.memoryMib(), cluster.node(g.node()).model().memoryMib());
        return m;
    }

    /** Why a job of this shape cannot be placed, if it already failed with the cluster in its current state. */
    private Status knownFailure(String shape) {
        return cluster.version() == blockedAtVersion ? blockedShapes.get(shape) : null;
    }

    private void rememberFailure(String shape, Status reason) {
        if (!pipeline.dependsOnlyOnClusterState()) return;
        if (cluster.version() != blockedAtVersion) {
            blockedShapes.clear();
            blockedAtVersion = cluster.version();
        }
        blockedShapes.put(shape, reason);
    }

    /** Jobs with the same key fit or fail together within a round (capacity only shrinks). */
    private static String shapeKey(JobSpec s) {
        return s.shape() + "/" + s.share().milli() + "/" + s.share().memoryMib() + "/" + s.requireNvlink() + "/" + new java.util.TreeSet<>(s.allowedModels())
                + (s.host().requested() ? "/" + s.host().cpuMilli() + "/" + s.host().memoryMib() : "");
    }

    /**
     * Batch mode's first step of a round: the first admissible pending jobs in policy order go to the placer
     * together; what it picks is bound through the pipeline's own rules and started. The usual loop follows.
     * CPU-only jobs are not batched (the placers solve for GPUs); the usual loop places them.
     */
    private void startBatch(PolicyContext ctx, long nowMs, List<String> started) {
        JobQueue head = policy.queue(ctx, pending.values());
        List<JobState> window = new ArrayList<>();
        for (JobState j; window.size() < batchPlacer.window() && (j = head.poll()) != null; ) {
            if (!j.spec().cpuOnly() && j.holdReason == null && quotaReason(j) == null && policy.admit(ctx, j) == null) window.add(j);
        }
        if (window.isEmpty()) return;
        Map<String, Allocation> plan = batchPlacer.plan(new BatchPlacer.Batch(cluster, pipeline, profile,
                window.stream().map(JobState::spec).toList()));
        for (JobState j : window) {
            Allocation a = plan.get(j.id());
            if (a == null || quotaReason(j) != null) continue;
            PlacementResult r = pipeline.placeGiven(cycle(j, null), a, true);
            if (r.ok()) {
                start(j, r.allocation(), nowMs);
                started.add(j.id());
            }
        }
    }

    /**
     * EASY: the earliest time the job fits if running jobs end as expected, and the GPUs it would take.
     * Called when the job does not fit now; running jobs are released in order of expected end, and the job
     * is placed again only when a released job leaves a node that could now hold one of its replicas.
     */
    private Reservation reserve(PolicyContext ctx, JobState job) {
        ExpectedEnds ends = new ExpectedEnds(running.values(), ctx);
        ReplicaDemand demand = ReplicaDemand.of(job.spec());
        int mark = cluster.checkpoint();
        try {
            while (!ends.isEmpty()) {
                Allocation freed = ends.next().allocation;
                cluster.release(freed);
                if (!anyCouldHoldReplica(freed.grants(), job.spec(), demand)) continue;
                PlacementResult p = pipeline.place(cycle(job, null), false);
                if (p.ok()) {
                    Set<Long> gpus = new HashSet<>();
                    for (GpuGrant g : p.allocation().grants()) gpus.add(CycleState.gpuKey(g.node(), g.gpu()));
                    return new Reservation(job.id(), ends.lastEndMs(), gpus);
                }
            }
            return null;
        } finally {
            cluster.rollback(mark);
        }
    }

    /**
     * Whether a node the grants were on could now hold one replica, by the capacity filter's measure (a
     * necessary condition for placing). If none can, the nodes able to hold a replica are the same as before
     * the release and a placement that failed would fail again.
     */
    private boolean anyCouldHoldReplica(List<GpuGrant> freed, JobSpec job, ReplicaDemand d) {
        int last = -1;
        for (GpuGrant g : freed) {
            if (g.node() == last) continue;
            last = g.node();
            NodeState n = cluster.node(g.node());
            if (n.cordoned() || !job.allows(n.model())) continue;
            if (!n.hostFits(d.host().cpuMilli(), d.host().memoryMib())) continue;
            if (!d.exclusive() ? n.maxShareableMilli() >= d.milli()
                    : d.requireNvlink() && d.gpus() > 1 ? n.maxIdleInNvlinkDomain() >= d.gpus() : n.fullyFreeGpus() >= d.gpus()) {
                return true;
            }
        }
        return false;
    }
}
