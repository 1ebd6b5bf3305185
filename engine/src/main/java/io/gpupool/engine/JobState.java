package io.gpupool.engine;

import io.gpupool.engine.placement.CycleState;
import io.gpupool.engine.policy.RuntimeOracle;
import io.gpupool.engine.policy.RuntimePredictor;
import io.gpupool.engine.state.Allocation;
import io.gpupool.engine.state.GpuGrant;
import io.gpupool.engine.status.Status;
import io.gpupool.model.JobSpec;

import java.util.List;
import java.util.Map;

/**
 * A job as the engine tracks it: status, what it holds, and the service it has had. Attained service
 * is kept across preemptions (a preempted job resumes where it stopped).
 */
public final class JobState {
    private final JobSpec spec;
    private final long seq;
    private final double gpuUnits;   // of the spec, read per queued job in every round of a keyed order (qssf, themis)
    private final long timeLimitMs;  // of the spec, -1: none (read with every prediction)
    JobStatus status = JobStatus.PENDING;
    Allocation allocation;
    long attainedBeforeMs;
    long runStartMs = -1;
    long firstStartMs = -1;
    long endMs = -1;
    long queuedSinceMs;
    long waitedMs;
    long waitedBeforeQueueMs;   // waitedMs when the job last entered the queue (it changes at a start, this does not)
    int preemptions;
    Status waitStatus;   // the last refusal, rendered as the wait reason (null: the reason is waitNote)
    String waitNote = "not yet considered";
    long reasonRound = -1;
    private long queuedMark;   // RoundNote.entries when the job last entered the queue unheld (see restReason)
    private String shapeKey; // computed once: rounds over long queues ask for it per job
    private long[] held = NOTHING_HELD;   // the GPUs of `allocation`, as keys (heldGpus)
    private RuntimeOracle toldBy;           // the oracle `trueRuntimeMs` came from
    private long trueRuntimeMs;
    private RuntimePredictor predictedBy;   // the predictor whose view of this job `prediction` is
    private RuntimePredictor.Prediction prediction;
    private long predictedAtVersion = RuntimePredictor.UNKNOWN_VERSION;   // the predictor's version predictedMs is of
    private long predictionVersion = RuntimePredictor.UNKNOWN_VERSION;    // and the view's own version it is of
    private long predictedMs;
    String capGroup;   // the group whose cap this job counts against (Scheduler.capConcurrency), or null
    String holdReason; // non-null while the job is held (Scheduler.hold): it stays queued but is not placed
    String reservation; // the advance reservation the job runs in (Scheduler.useReservation), or null
    private final RoundNote round;

    /**
     * The scheduler's latest round, and why jobs it did not reach are waiting (shared by all jobs). A full round whose
     * walk stopped early, because every job left in its queue would only have been refused again with its shape's
     * refusal, leaves those refusals here instead of giving them to each job: a job reads its shape's while it is one of
     * the jobs that walk left (see {@link #restReason}).
     */
    static final class RoundNote {
        long number = -1;
        String unreached = "not yet considered";
        long entries;                         // counts jobs entering the queue unheld (JobState.queuedMark)
        long restRound = Long.MIN_VALUE;      // the round whose walk stopped early, or none
        long restUpTo;                        // entries when it stopped: later entries are not jobs it left
        Map<String, Status> restByShape;      // the refusal it gave each shape still queued

        /** This round's walk stopped with every job left in its queue refused as its shape was in {@code byShape}. */
        void restWaits(Map<String, Status> byShape) {
            restRound = number;
            restUpTo = entries;
            restByShape = byShape;
        }
    }

    JobState(JobSpec spec, long seq, long nowMs, RoundNote round) {
        this.spec = spec;
        this.gpuUnits = spec.gpuMilliDemand() / 1000.0;
        this.timeLimitMs = spec.timeLimitMs().orElse(-1);
        this.seq = seq;
        this.queuedSinceMs = nowMs;
        this.round = round;
        this.queuedMark = ++round.entries;
    }

    /** The same pending job with another spec: its place in arrival order, its wait and its hold stay. */
    JobState replacedBy(JobSpec newSpec) {
        JobState j = new JobState(newSpec, seq, queuedSinceMs, round);
        j.attainedBeforeMs = attainedBeforeMs;
        j.firstStartMs = firstStartMs;
        j.waitedMs = waitedMs;
        j.waitedBeforeQueueMs = waitedBeforeQueueMs;
        j.preemptions = preemptions;
        j.holdReason = holdReason;
        j.reservation = reservation;
        return j;
    }

    /**
     * The job enters the queue again, or its hold ends: it was no job a stopped walk left (a held job was passed over,
     * and gets no reason from the round).
     */
    void queuedAgain() {
        queuedMark = ++round.entries;
    }

    /**
     * The refusal of this job's shape, when it is one of the jobs the last full round's walk left (queued and not held
     * when the walk stopped, neither given a reason since nor queued again): the walk would have given it that refusal.
     */
    private Status restReason() {
        RoundNote r = round;
        if (r.restRound != r.number || reasonRound == r.number || queuedMark > r.restUpTo || status != JobStatus.PENDING || holdReason != null) return null;
        return r.restByShape.get(shapeKey());
    }

    /**
     * Writes the reason read from the stopped walk ({@link #restReason}) into the job, before a hold, a start or an
     * entry into the queue changes whether the job would read it: what it reads stays what the whole walk gave it.
     */
    void keepRestReason() {
        Status rest = restReason();
        if (rest == null) return;
        waitStatus = rest;
        waitNote = null;
        reasonRound = round.restRound;
    }

    /** Records why the job waits (or, once rejected, why it never runs), as seen by the current round. */
    void waitBecause(Status why) {
        waitStatus = why;
        waitNote = null;
        reasonRound = round.number;
    }

    /** Records a note on the job's wait that is no refusal ("preempted for j7"). */
    void waitBecause(String note) {
        waitStatus = null;
        waitNote = note;
        reasonRound = round.number;
    }

    public JobSpec spec() { return spec; }
    public String id() { return spec.id(); }
    /** Arrival order: ties in every policy go to the lower sequence number. */
    public long seq() { return seq; }
    public JobStatus status() { return status; }
    public Allocation allocation() { return allocation; }

    private static final long[] NOTHING_HELD = new long[0];

    /**
     * The GPUs of {@link #allocation()}, one entry per grant, replica after replica, each as its
     * {@link CycleState#gpuKey}; empty without one. Shared: callers must not change it. The preemption planner's
     * counts read every listed victim's GPUs in most rounds, and an array is one read where the allocation's lists of
     * grants are several.
     */
    public long[] heldGpus() { return held; }

    /** Holds {@code a} (null: nothing). */
    void hold(Allocation a) {
        allocation = a;
        if (a == null) {
            held = NOTHING_HELD;
            return;
        }
        List<GpuGrant> grants = a.grants();
        long[] keys = new long[grants.size()];
        for (int k = 0; k < keys.length; k++) keys[k] = CycleState.gpuKey(grants.get(k).node(), grants.get(k).gpu());
        held = keys;
    }

    public long firstStartMs() { return firstStartMs; }
    public long endMs() { return endMs; }
    public int preemptions() { return preemptions; }
    /**
     * Why a pending job is not running, as the last scheduling round saw it, in English ("waits: " and its
     * {@link #waitStatus()}, or a note on the round); why a rejected job never runs; null otherwise.
     */
    public String waitReason() {
        if (status != JobStatus.PENDING && status != JobStatus.REJECTED) return null;
        if (holdReason != null) return Status.held(holdReason).message();
        Status rest = restReason();
        if (rest != null) return "waits: " + rest.message();
        if (!reasonIsCurrent()) return round.unreached;
        if (waitStatus == null) return waitNote;
        return status == JobStatus.REJECTED ? waitStatus.message() : "waits: " + waitStatus.message();
    }

    /**
     * The refusal behind {@link #waitReason()}: the hold, the placement's, the quota's or the policy's refusal the
     * last round gave, or the reason a rejected job never runs; null when not pending or rejected, and when the
     * reason is a note rather than a refusal (not reached in the last round, queued behind a strict head, preempted).
     */
    public Status waitStatus() {
        if (status != JobStatus.PENDING && status != JobStatus.REJECTED) return null;
        if (holdReason != null) return Status.held(holdReason);
        Status rest = restReason();
        if (rest != null) return rest;
        return reasonIsCurrent() ? waitStatus : null;
    }

    private boolean reasonIsCurrent() {
        return status == JobStatus.REJECTED || reasonRound == round.number || reasonRound < 0 && round.number < 0;
    }
    /** The advance reservation the job runs in, or null ({@link Scheduler#useReservation}). */
    public String reservation() { return reservation; }
    /** Why the job is held, or null when it is not ({@link Scheduler#hold}). */
    public String holdReason() { return holdReason; }
    /** Start of the current run, or -1 when not running. */
    public long runStartMs() { return runStartMs; }
    /** When the job last entered the queue (submission or preemption). */
    public long queuedSinceMs() { return queuedSinceMs; }

    /**
     * Jobs with the same key fit or fail together within a round (capacity only shrinks): gang shape, share, memory,
     * NVLink rule, allowed models and host request.
     */
    public String shapeKey() {
        if (shapeKey == null) shapeKey = shapeKeyOf(spec);
        return shapeKey;
    }

    /** The text of a spec's {@link #shapeKey} (the engine shares one string per shape: {@link ShapeKeys}). */
    static String shapeKeyOf(JobSpec s) {
        return s.shape() + "/" + s.share().milli() + "/" + s.share().memoryMib() + "/" + s.requireNvlink() + "/" + new java.util.TreeSet<>(s.allowedModels())
                + (s.host().requested() ? "/" + s.host().cpuMilli() + "/" + s.host().memoryMib() : "");
    }

    /**
     * The predictor's current run-time prediction for this job, never more than its time limit (the job is stopped
     * there, so it cannot run longer); the predictor's view of it is made once ({@link RuntimePredictor#track}).
     */
    public long predictedRuntimeMs(RuntimePredictor predictor) {
        RuntimePredictor.Prediction view = prediction(predictor);
        // the answer stands while the predictor's version does (rounds of arrivals ask every queued job again), and
        // after it moved while the view's own version stands (a completion changes only the jobs of its groups)
        long version = predictor.version();
        if (version != RuntimePredictor.UNKNOWN_VERSION && version == predictedAtVersion) return predictedMs;
        long own = version == RuntimePredictor.UNKNOWN_VERSION ? RuntimePredictor.UNKNOWN_VERSION : view.version();
        if (own != RuntimePredictor.UNKNOWN_VERSION && own == predictionVersion) {
            predictedAtVersion = version;
            return predictedMs;
        }
        long ms = capped(view.ms());
        predictedAtVersion = version;
        predictionVersion = own;
        predictedMs = ms;
        return ms;
    }

    /** The predictor's live view of this job's uncapped prediction ({@link RuntimePredictor#track}), made once per predictor. */
    public RuntimePredictor.Prediction prediction(RuntimePredictor predictor) {
        if (predictor != predictedBy) {
            prediction = predictor.track(spec);
            predictedBy = predictor;
            predictedAtVersion = RuntimePredictor.UNKNOWN_VERSION;
            predictionVersion = RuntimePredictor.UNKNOWN_VERSION;
        }
        return prediction;
    }

    /** A prediction capped by the job's time limit (kept terms of jobs compute the same: FairnessTerms, RunningTerms). */
    private long capped(long predictedMs) {
        return timeLimitMs < 0 ? predictedMs : Math.min(predictedMs, timeLimitMs);
    }

    /** Shares one string among the jobs of a shape, so that memos keyed on it compare by identity first. */
    void internShapeKey(ShapeKeys shapes) {
        shapeKey = shapes.of(spec);
    }

    /** The job's true run time, asked of the oracle once: clairvoyant policies read it for every job in every round. */
    public long trueRuntimeMs(RuntimeOracle oracle) {
        if (oracle != toldBy) {
            trueRuntimeMs = oracle.runtimeMs(spec.id());
            toldBy = oracle;
        }
        return trueRuntimeMs;
    }

    /** Wall-clock run time so far, over all runs. */
    public long attainedMs(long nowMs) {
        return attainedBeforeMs + (runStartMs >= 0 ? nowMs - runStartMs : 0);
    }

    /** GPU-time so far in GPU-milliseconds (a half-GPU share counts half). */
    public double attainedGpuMs(long nowMs) {
        return attainedMs(nowMs) * gpuUnits();
    }

    /** GPUs held while running, in GPU units (0.5 for a half-GPU share). */
    public double gpuUnits() {
        return gpuUnits;
    }

    /** Total time spent waiting in the queue so far (over all waits). */
    public long waitedMs(long nowMs) {
        return waitedMs + (status == JobStatus.PENDING ? nowMs - queuedSinceMs : 0);
    }

    /**
     * While the job is pending, {@code waitedMs(now) - now}: a constant for as long as it stays queued, also across
     * the instant it starts (so an order keyed on it stays valid until the queue drops the job); new when it is queued again.
     */
    public long waitOffsetMs() {
        return waitedBeforeQueueMs - queuedSinceMs;
    }

    /** Time since the current run started: work lost if it is preempted now. */
    public long runningForMs(long nowMs) {
        return runStartMs >= 0 ? nowMs - runStartMs : 0;
    }

    @Override
    public String toString() {
        return spec.id() + "[" + status + "]";
    }
}
