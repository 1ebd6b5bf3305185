package io.gpupool.server.core;

import io.gpupool.store.JobRow;

import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * A pending or running job as the engine loop tracks it: its current store row, its request, and where its
 * current attempt runs.
 */
final class ActiveJob {
    JobRow row;
    /** Replaced by an edit of the pending job (priority, GPU types). */
    JobRequest request;
    /** The array task this job is, or null for a job of its own. */
    final ArrayTask array;
    /** What it still waits for; null when nothing. */
    Dependency dependency;
    /** Why its dependency can never be met, where it is kept queued rather than failed; null otherwise. */
    String dependencyNever;
    /** Who put it on hold; null when it is not held by a user. */
    String heldBy;
    /** Completes when the job's insertion is durable (an idempotent retry waits for it). */
    final CompletableFuture<Void> inserted;
    /** The nodes the current attempt holds GPUs on (empty while pending); after a requeue, those of the last one. */
    Set<String> nodes = Set.of();
    /** Nodes whose agent reported the current attempt started, those that reported it succeeded, and those that reported any end. */
    final Set<String> confirmed = new HashSet<>();
    final Set<String> succeeded = new HashSet<>();
    final Set<String> endedOn = new HashSet<>();

    ActiveJob(JobRow row, JobRequest request, CompletableFuture<Void> inserted) {
        this(row, request, null, inserted);
    }

    ActiveJob(JobRow row, JobRequest request, ArrayTask array, CompletableFuture<Void> inserted) {
        this.row = row;
        this.request = request;
        this.array = array;
        this.inserted = inserted;
    }

    String id() { return row.id(); }

    /** What the store keeps of it now. */
    StoredSpec spec() { return new StoredSpec(request, array, dependency, heldBy); }
    String tenant() { return row.tenant(); }

    /** A new attempt starts on these nodes. */
    void placedOn(Set<String> on) {
        nodes = new LinkedHashSet<>(on);
        confirmed.clear();
        succeeded.clear();
        endedOn.clear();
    }
}
