package io.gpupool.store;

/** One entry of a job's history (SUBMITTED, STARTED, PREEMPTED, SUCCEEDED, FAILED, CANCELLED, TIMEOUT, ...). */
public record EventRow(long id, String jobId, long atMs, String type, String detail) {
}
