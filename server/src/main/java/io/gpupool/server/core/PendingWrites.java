package io.gpupool.server.core;

import io.gpupool.store.GroupCommitWriter;
import io.gpupool.store.Write;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * What one iteration of the engine loop decided, on its way to the store: the writes, the changes to publish once they
 * are committed, and the future every answer of the iteration waits on. {@link #flush} hands them to the group-commit
 * writer in one piece, so an answer the API gives is always durable and the store holds a prefix of the engine's
 * decisions in order. Loop thread only.
 */
final class PendingWrites {
    private final GroupCommitWriter writer;
    private final Consumer<List<Change>> publisher;
    private final List<Write> writes = new ArrayList<>();
    private final List<Change> changes = new ArrayList<>();
    private CompletableFuture<Void> iterationCommit;

    PendingWrites(GroupCommitWriter writer, Consumer<List<Change>> publisher) {
        this.writer = writer;
        this.publisher = publisher;
    }

    void add(Write w) {
        writes.add(w);
    }

    /** A change of a job, published (on SSE) once this iteration is committed. */
    void publish(Change c) {
        changes.add(c);
    }

    /** Completes when this iteration's writes are committed (or fails when the store does not commit them). */
    CompletableFuture<Void> commitOfThisIteration() {
        if (iterationCommit == null) iterationCommit = new CompletableFuture<>();
        return iterationCommit;
    }

    /**
     * While the store's commits fail (its database is down), a user's change is refused at once (503) and changes
     * nothing. Taken in, it would wait for a commit that may come minutes later: the caller gets 503 after 30 s
     * and the change is made anyway when the database is back.
     */
    void requireStore() {
        if (!writer.healthy()) {
            throw new ServiceException(ServiceException.Kind.UNAVAILABLE, null, "the store is unavailable (its database does not commit); retry later");
        }
    }

    /**
     * Hands this iteration's writes to the store, with the agent nodes' changed progress; the iteration's answers, the
     * published changes and the waiting reports of nodes whose desired state changed go on after the commit.
     */
    void flush(Collection<AgentNodes.Node> agents) {
        CompletableFuture<Void> done = iterationCommit;
        iterationCommit = null;
        List<CompletableFuture<Void>> nodeChanges = new ArrayList<>();
        for (AgentNodes.Node a : agents) {
            if (a.progressDirty) writes.add(new Write.PutNodeProgress(a.progress()));
            a.progressDirty = false;
            if (a.changed) {
                nodeChanges.add(a.nextChange);
                a.nextChange = new CompletableFuture<>();
                a.changed = false;
            }
        }
        if (writes.isEmpty() && done == null && nodeChanges.isEmpty()) return;
        // with nothing new to write, an answer still goes through the writer: it must not overtake the commit of earlier
        // decisions it reflects, and (an active replica) its empty transaction checks the fencing token, so a replica
        // that lost the lease answers no agent
        List<Change> published = List.copyOf(changes);
        List<Write> batch = List.copyOf(writes);
        writes.clear();
        changes.clear();
        CompletableFuture<Void> committed = writer.submit(batch);
        committed.whenComplete((v, e) -> {
            nodeChanges.forEach(f -> f.complete(null)); // waiting reports ask again (and find out if the commit failed)
            if (e != null) {
                if (done != null) done.completeExceptionally(new ServiceException(ServiceException.Kind.UNAVAILABLE, null, "the store did not commit: " + e.getMessage()));
                return;
            }
            if (done != null) done.complete(null);
            publisher.accept(published);
        });
    }
}
