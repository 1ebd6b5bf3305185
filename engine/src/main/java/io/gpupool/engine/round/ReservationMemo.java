package io.gpupool.engine.round;

import io.gpupool.engine.JobState;
import io.gpupool.engine.policy.PolicyContext;
import io.gpupool.engine.policy.RuntimePredictor;

import io.gpupool.engine.placement.CycleState;
import io.gpupool.engine.state.GpuGrant;

import java.util.List;
import java.util.Set;

/**
 * The last EASY reservation, given again while a new computation would give the same: same blocked job, same
 * cluster version (so the same running jobs and free GPUs), same predictions (the predictor's version), and no
 * running job's expected end newly clamped. A running job's expected end at time t is {@code max(t + 1 s, F)}
 * with F fixed while it runs ({@link ExpectedEnds}); as t grows, ends already clamped stay tied in arrival
 * order and the others keep their order, until t + 1 s reaches the next unclamped F. Until then the jobs are
 * released in the same order, the same one makes room, and only a clamped reservation time moves with t.
 * Between arrivals, a backfilling policy's rounds then skip the reservation's release-and-place search.
 */
final class ReservationMemo {
    private String jobId;
    private long clusterVersion = -1;
    private RuntimePredictor predictor;
    private long predictorVersion;
    private long reuseBeforeMs;     // reuse while now + MIN_REMAINING_MS < this
    private long fixedEndMs;        // the expected end that makes room when not clamped, else Long.MIN_VALUE
    private Set<Long> gpus;         // null: the job does not fit even with every running job gone
    private boolean valid;

    /** The reservation as the last computation would give it now, or null when that cannot be known; {@code found} is set. */
    Reuse reuse(PolicyContext ctx, JobState job) {
        if (!valid || ctx.predictor().version() == RuntimePredictor.UNKNOWN_VERSION) return null;
        if (!job.id().equals(jobId) || ctx.cluster().version() != clusterVersion || ctx.predictor() != predictor
                || ctx.predictor().version() != predictorVersion) return null;
        long clamp = ctx.nowMs() + ExpectedEnds.MIN_REMAINING_MS;
        if (clamp >= reuseBeforeMs) return null;
        return new Reuse(gpus == null ? null : new EasyReservation(jobId, Math.max(clamp, fixedEndMs), gpus));
    }

    /** What {@link #reuse} found: the reservation, or null for a job that fits nowhere. */
    record Reuse(EasyReservation reservation) {}

    /**
     * Remembers a reservation computed on the cluster at {@code clusterVersion} (null: the job fits nowhere) and the
     * bounds of its reuse; returns it with the remembered GPU set when they are equal, so that memos keyed on the set
     * ({@link FailureMemo}) compare it by identity.
     */
    EasyReservation remember(PolicyContext ctx, long clusterVersion, JobState job, EasyReservation made, long fixedEndMs, long nextUnclampedEndMs) {
        this.jobId = job.id();
        this.clusterVersion = clusterVersion;
        this.predictor = ctx.predictor();
        this.predictorVersion = predictor.version();
        this.reuseBeforeMs = nextUnclampedEndMs;
        this.fixedEndMs = fixedEndMs;
        this.valid = true;
        if (made == null) return null;
        if (!made.gpus().equals(gpus)) gpus = made.gpus();
        return new EasyReservation(made.jobId(), made.atMs(), gpus);
    }

    /**
     * The remembered GPU set when the grants' GPUs are exactly its GPUs, else null: a reservation that finds the same
     * GPUs again needs no new set (and {@link #remember} would keep this one). As many grants as GPUs, each in the
     * set and no two on one GPU (shares of one GPU may be two grants), make the same set. Only shares are compared with
     * the grants before them: a whole GPU is granted once in an allocation (the cluster state holds 1000 milli a GPU),
     * and comparing every pair cost a 64-GPU gang's reservation 2,016 comparisons in every round it was reused.
     */
    Set<Long> sameGpus(List<GpuGrant> grants) {
        return sameGpus(gpus, grants);
    }

    static Set<Long> sameGpus(Set<Long> gpus, List<GpuGrant> grants) {
        if (gpus == null || gpus.size() != grants.size()) return null;
        for (int i = 0; i < grants.size(); i++) {
            GpuGrant g = grants.get(i);
            if (!gpus.contains(CycleState.gpuKey(g.node(), g.gpu()))) return null;
            if (g.exclusive()) continue;
            for (int k = 0; k < i; k++) if (grants.get(k).node() == g.node() && grants.get(k).gpu() == g.gpu()) return null;
        }
        return gpus;
    }

    /** A new configuration or pipeline: nothing remembered holds any more. */
    void forget() {
        valid = false;
    }
}
