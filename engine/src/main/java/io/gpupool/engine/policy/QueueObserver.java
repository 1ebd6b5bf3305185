package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;

/**
 * A policy that keeps its own copy of the queue across rounds (fair-share's tenant lines): the scheduler tells it of
 * every job that enters the pending queue (submitted, requeued, its spec replaced) and leaves it (started, cancelled),
 * in order, and of the pending jobs when the policy is configured. Calls come during rounds too (a start, a
 * preemption's requeue): a policy applies them when it next builds a queue.
 */
public interface QueueObserver {
    void queued(JobState job);

    void dequeued(JobState job);
}
