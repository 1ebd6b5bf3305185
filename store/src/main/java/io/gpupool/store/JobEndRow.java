package io.gpupool.store;

/** A job that reached a final state, for usage accounting (table usage_jobs). @param user "" when none */
public record JobEndRow(String jobId, String tenant, String user, String state, long submittedMs, long endedMs) {
}
