package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;

/**
 * A policy that learns from the jobs that finish (e.g. the distribution of service it orders by): the scheduler
 * tells it of each completion, after the job's attained service is final. What it learned lives as long as the
 * policy does (a reconfiguration to another policy starts afresh).
 */
public interface CompletionObserver {
    void jobFinished(JobState job, long nowMs);
}
