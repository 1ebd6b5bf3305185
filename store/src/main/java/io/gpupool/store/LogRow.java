package io.gpupool.store;

/** One output line of a job. */
public record LogRow(long id, String jobId, long atMs, String line) {
}
