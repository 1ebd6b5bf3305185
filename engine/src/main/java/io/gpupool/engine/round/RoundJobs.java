package io.gpupool.engine.round;

import io.gpupool.engine.JobState;
import io.gpupool.engine.reservation.Fence;
import io.gpupool.engine.state.Allocation;
import io.gpupool.engine.status.Status;

import java.util.Collection;

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
}
