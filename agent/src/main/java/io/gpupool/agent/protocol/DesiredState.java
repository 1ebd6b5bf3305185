package io.gpupool.agent.protocol;

import java.util.List;

/**
 * The attempts the server wants running on this node, complete (not a change list): the agent starts
 * what is listed and not running, and stops what runs and is not listed.
 *
 * @param version increases with every change for this node (the server's store keeps it across restarts);
 *                the agent ignores a state older than the newest it applied, so a late message cannot
 *                undo a newer decision
 * @param jobs    the attempts
 */
public record DesiredState(long version, List<JobLaunch> jobs) {
    public DesiredState {
        jobs = List.copyOf(jobs);
    }
}
