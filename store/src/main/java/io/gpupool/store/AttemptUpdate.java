package io.gpupool.store;

/**
 * A change to an existing attempt row (a status report of its agent, or the server closing it). Null fields
 * keep what the row holds; a RUNNING state only replaces ASSIGNED, so a late start report never reopens an
 * attempt that has ended.
 */
public record AttemptUpdate(String jobId, int attempt, String node, String state, Long pid, Long startedMs, Long endedMs,
                            Integer exitCode, String message) {
}
