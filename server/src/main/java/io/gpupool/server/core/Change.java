package io.gpupool.server.core;

/**
 * A committed change of a job, published on the SSE stream after the store has it.
 *
 * @param type SUBMITTED, STARTED, PREEMPTED, REQUEUED, SUCCEEDED, FAILED, CANCELLED or TIMEOUT
 */
public record Change(String type, String jobId, String tenant, String state, long atMs, String detail) {
}
