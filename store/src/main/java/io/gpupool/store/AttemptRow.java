package io.gpupool.store;

/**
 * One attempt of a job on one node: what the server granted there and what the node's agent reported.
 *
 * @param grants     the grants on this node as JSON (the service writes and reads it)
 * @param assignedMs when the server placed the attempt
 * @param state      ASSIGNED, RUNNING, STOPPING, then SUCCEEDED, FAILED, STOPPED, LOST or TIMEOUT
 * @param startedMs  when the process started (the agent's clock); null until it reports
 * @param endedMs    when it ended
 */
public record AttemptRow(String jobId, int attempt, String node, String grants, long assignedMs, String state,
                         Long pid, Long startedMs, Long endedMs, Integer exitCode, String message) {
}
