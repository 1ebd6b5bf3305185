package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;

/**
 * A policy that keeps its own index of the running jobs across rounds (las's bands, srtf-oracle's remaining times):
 * the scheduler tells it of every run that begins (the job is RUNNING, its run start set) and ends (completion,
 * cancellation, preemption: the job no longer runs), and of the running jobs when the policy is configured.
 */
public interface RunObserver {
    void runStarted(JobState job);

    void runEnded(JobState job);
}
