package io.gpupool.store;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The store's single writer. Callers hand in writes and get a future that completes once the writes are
 * committed (durable). The writer thread takes everything queued since its last commit, up to
 * {@link #MAX_BATCH} writes, into one transaction: under load many submissions share one fsync (group
 * commit), which is what makes thousands of durable submissions per second possible.
 *
 * <p>Writes commit in the order they were handed in, and a batch commits whole or not at all, so the store
 * always holds a prefix of the service's history. A failed commit (database down) is retried with backoff
 * until it succeeds or the writer is closed; its futures stay open meanwhile. A commit reported failed may have
 * gone through (the database died before answering); its retry then applies the batch again, which changes
 * nothing ({@link BatchSql}).
 *
 * <p>With a {@link WriteFence} (an active replica on PostgreSQL) every transaction, an empty one too, first checks the
 * replica's fencing token: a refused commit fails its futures and every later one, and the writer stops. Without one,
 * an empty batch completes in order without touching the database.
 */
public final class GroupCommitWriter implements AutoCloseable {
    public static final int MAX_BATCH = 4000;
    /**
     * The longest pause between two tries of a failed commit. Each try while the database is down also waits for
     * a connection (the pool's 2 s), so this costs the database little; once the pool reconnects (HikariCP retries
     * with a backoff of up to 5 s) the writer commits within a second (it paused up to 5 s more before).
     */
    private static final long MAX_BACKOFF_MS = 1000;
    private static final Logger LOG = LoggerFactory.getLogger(GroupCommitWriter.class);
    private static final Work STOP = new Work(List.of(), new CompletableFuture<>());

    private record Work(List<Write> writes, CompletableFuture<Void> done) {}

    private final Database db;
    private final WriteFence fence;
    private volatile WriteFence.Fenced fenced;
    private final BlockingQueue<Work> queue = new LinkedBlockingQueue<>();
    private final Thread thread;
    private volatile boolean closed;
    private volatile boolean healthy = true;
    private final AtomicLong commits = new AtomicLong();
    private final AtomicLong written = new AtomicLong();
    private volatile long lastCommitNanos;
    /** The number of the last committed transaction (jobs' change_seq); -1: read the highest stored at the first commit. */
    private long lastChange = -1;

    public GroupCommitWriter(Database db) {
        this(db, null);
    }

    /** A writer whose every commit carries the fencing token {@code fence} (null: none). */
    public GroupCommitWriter(Database db, WriteFence fence) {
        this.db = db;
        this.fence = fence;
        this.thread = Thread.ofPlatform().name("gpupool-store-writer").daemon(true).start(this::run);
    }

    /** Queues the writes (committed together, in order, after everything queued before). */
    public CompletableFuture<Void> submit(List<Write> writes) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        if (closed || fenced != null) {
            done.completeExceptionally(fenced != null ? fenced : new IllegalStateException("store writer is closed"));
            return done;
        }
        queue.add(new Work(List.copyOf(writes), done));
        WriteFence.Fenced f = fenced;
        if (f != null) done.completeExceptionally(f);   // fenced while it was queued: the writer thread is gone
        return done;
    }

    public CompletableFuture<Void> submit(Write write) {
        return submit(List.of(write));
    }

    /** False while commits are failing (the database is unreachable or full). */
    public boolean healthy() { return healthy && fenced == null; }
    /** True once a commit was refused by the fencing token: this writer commits nothing more. */
    public boolean fenced() { return fenced != null; }
    public long commits() { return commits.get(); }
    public long writes() { return written.get(); }
    public int backlog() { return queue.size(); }
    /** Duration of the last commit (apply + fsync), in nanoseconds. */
    public long lastCommitNanos() { return lastCommitNanos; }

    private void run() {
        List<Work> batch = new ArrayList<>();
        List<Write> writes = new ArrayList<>();
        WriteFence.Fenced refused = null;
        try {
            while (true) {
                Work first = queue.take();
                if (first == STOP) break;
                batch.add(first);
                writes.addAll(first.writes());
                boolean stop = false;
                Work next;
                while (writes.size() < MAX_BATCH && (next = queue.poll()) != null) {
                    if (next == STOP) { stop = true; break; }
                    batch.add(next);
                    writes.addAll(next.writes());
                }
                commitWithRetry(writes);
                for (Work w : batch) w.done().complete(null);
                batch.clear();
                writes.clear();
                if (stop) break;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (WriteFence.Fenced e) {
            refused = e;
            healthy = false;
            if (fence.refusalExpected()) LOG.debug("rehearsal: {}", e.getMessage());
            else LOG.error("{}", e.getMessage());
        } finally {
            // a fenced replica steps down before any answer waiting on these writes, or handed in later, could go out
            if (refused != null) {
                fence.fenced();
                fenced = refused;
            }
            RuntimeException gone = fenced != null ? fenced : new IllegalStateException("store writer stopped");
            for (Work w : batch) w.done().completeExceptionally(gone);
            Work w;
            while ((w = queue.poll()) != null) w.done().completeExceptionally(gone);
        }
    }

    /** One transaction on a fresh pooled connection per attempt, so a broken connection is not reused. */
    private void commitWithRetry(List<Write> writes) throws InterruptedException {
        if (writes.isEmpty() && fence == null) return;   // an empty batch only orders its answers after the commits before it
        long backoffMs = 50;
        long change = -1;   // this batch's number, kept for its retries: a retry of a commit that went through writes the same
        while (true) {
            long t0 = System.nanoTime();
            try (Connection c = db.connection()) {
                c.setAutoCommit(false);
                try {
                    if (fence != null) fence.check(c);
                    if (change < 0 && !writes.isEmpty()) change = nextChange(c);
                    BatchSql.apply(c, writes, change);
                    c.commit();
                    if (!writes.isEmpty()) lastChange = change;
                } catch (SQLException | RuntimeException e) {
                    try {
                        c.rollback();
                    } catch (SQLException r) {
                        e.addSuppressed(r);   // a dead connection cannot roll back; the first failure says why
                    }
                    throw e;
                }
                healthy = true;
                if (writes.isEmpty()) return;
                lastCommitNanos = System.nanoTime() - t0;
                commits.incrementAndGet();
                written.addAndGet(writes.size());
                return;
            } catch (WriteFence.Fenced e) {
                throw e;
            } catch (SQLException | RuntimeException e) {
                healthy = false;
                LOG.warn("commit of {} writes failed, retrying in {} ms: {}", writes.size(), backoffMs, e.getMessage());
                if (closed && backoffMs >= MAX_BACKOFF_MS) throw new InterruptedException("closing with a failing store");
                TimeUnit.MILLISECONDS.sleep(backoffMs);
                backoffMs = Math.min(MAX_BACKOFF_MS, backoffMs * 2);
            }
        }
    }

    /**
     * This transaction's number: one more than the last. The first (after the fence check, so on an active replica after
     * the takeover, when no other replica commits any more) continues from the highest stored.
     */
    private long nextChange(Connection c) throws SQLException {
        if (lastChange < 0) {
            try (var ps = c.prepareStatement("SELECT COALESCE(MAX(change_seq), 0) FROM jobs"); var rs = ps.executeQuery()) {
                rs.next();
                lastChange = rs.getLong(1);
            }
        }
        return lastChange + 1;
    }

    /** Commits everything queued so far, then stops the writer thread. */
    @Override
    public void close() {
        if (closed) return;
        closed = true;
        queue.add(STOP);
        try {
            thread.join(30_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
