package io.gpupool.server.core;

import io.gpupool.store.JobRow;

import java.util.concurrent.CompletableFuture;

/** A pending or running job as the engine loop tracks it: its current store row and its request. */
final class ActiveJob {
    JobRow row;
    final JobRequest request;
    /** Completes when the job's insertion is durable (an idempotent retry waits for it). */
    final CompletableFuture<Void> inserted;

    ActiveJob(JobRow row, JobRequest request, CompletableFuture<Void> inserted) {
        this.row = row;
        this.request = request;
        this.inserted = inserted;
    }

    String id() { return row.id(); }
    String tenant() { return row.tenant(); }
}
