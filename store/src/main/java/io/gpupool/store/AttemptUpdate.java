package io.gpupool.store;

/**
 * A change to an existing attempt row (a status report of its agent, or the server closing it). Null fields
 * keep what the row holds. {@code state} must not be null: RUNNING (started, or a warning) replaces only
 * ASSIGNED; STOPPING (the server no longer wants it) and the ends apply only to an attempt that has not
 * ended, except that the agent's own end replaces a LOST the server declared. So a late or repeated report
 * never reopens an attempt that has ended.
 */
public record AttemptUpdate(String jobId, int attempt, String node, String state, Long pid, Long startedMs, Long endedMs,
                            Integer exitCode, String message) {
}
