package io.gpupool.engine.round;

import io.gpupool.engine.JobState;
import io.gpupool.engine.reservation.Fence;
import io.gpupool.engine.state.Allocation;
import io.gpupool.engine.status.Status;

import java.util.Collection;
import java.util.Map;
import java.util.Set;

/** What a round may read and do to the engine's jobs; the scheduler's job table implements it. */
public interface RoundJobs {
    /** The queued jobs, in the order they were queued. */
    Collection<JobState> pending();

    Collection<JobState> running();

    /** Why the tenant's hard limit keeps the job from starting now, or null. */
    Status quotaReason(JobState job);

    /** The GPUs advance reservations keep the job off now ({@link Fence#NONE}: none). */
    Fence fence(JobState job, long nowMs);

    /** Starts a pending job with GPUs the pipeline has just bound to it. */
    void start(JobState job, Allocation allocation, long nowMs);

    /** Stops a running job and queues it again with its attained service (a preemption victim). */
    void requeue(JobState job, long nowMs);

    /** Keeps a pending job out of placement with this reason until the driver releases it (null: no hold). */
    void hold(JobState job, String reason);

    /** Records why the job waits, as this round sees it: a refusal. */
    void waits(JobState job, Status why);

    /** Records why the job waits when no plugin refused it (e.g. "preempted for j7"). */
    void note(JobState job, String note);

    /** A full round begins: every pending job gets this round's reason, or the one {@link #unreached} sets. */
    void beginFullRound();

    /** Why the pending jobs this round does not reach wait. */
    void unreached(String reason);

    /** The shapes ({@link JobState#shapeKey}) of the pending jobs (a view, kept as jobs enter and leave the queue). */
    Set<String> pendingShapes();

    /**
     * Whether only placement refuses jobs now: no tenant limit, array cap or advance reservation applies, so
     * {@link #quotaReason} is null and {@link #fence} NONE for every pending job.
     */
    boolean onlyPlacementRefuses();

    /**
     * The full round's walk stops: every job left in its queue (pending and not held) waits with its shape's refusal
     * in {@code byShape}, as if the walk had given it; the job reads it when asked instead.
     */
    void restWaits(Map<String, Status> byShape);
}
