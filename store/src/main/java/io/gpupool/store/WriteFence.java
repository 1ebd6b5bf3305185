package io.gpupool.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * The fencing token of the active replica (high availability, PostgreSQL only): every transaction of the store's writer
 * first reads the lease row's epoch {@code FOR SHARE} and refuses to commit when it is not this replica's. A takeover
 * updates that row, so it waits for a commit already past the check, and every later commit of the replica it replaced
 * sees the new epoch and is refused ({@link Fenced}); the writer then stops for good and calls {@link #onFenced}.
 */
public final class WriteFence {
    private final long epoch;
    private final Runnable onFenced;
    private final boolean rehearsal;

    /** {@code onFenced}: what the replica does once a commit was refused (steps down); runs on the writer's thread. */
    public WriteFence(long epoch, Runnable onFenced) {
        this(epoch, onFenced, false);
    }

    private WriteFence(long epoch, Runnable onFenced, boolean rehearsal) {
        this.epoch = epoch;
        this.onFenced = onFenced;
        this.rehearsal = rehearsal;
    }

    /**
     * The fence of a standby's rehearsed takeover: an epoch no replica holds, so every commit is refused, as intended;
     * the refusal is no failure and is not reported as one.
     */
    public static WriteFence rehearsal() {
        return new WriteFence(-1, () -> {}, true);
    }

    public long epoch() { return epoch; }

    /** Whether a refusal is expected (a rehearsal) rather than a replica losing its lease. */
    boolean refusalExpected() { return rehearsal; }

    /** A commit refused because another replica took the lease over: never retried, never acknowledged. */
    public static final class Fenced extends RuntimeException {
        public Fenced(long own, long current) {
            super("this replica's lease (epoch " + own + ") was taken over (epoch " + current + "); its writes are refused");
        }
    }

    /** Inside the writer's transaction, before its writes: holds the row shared until the commit. */
    void check(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT epoch FROM service_lease WHERE id = 1 FOR SHARE");
             ResultSet rs = ps.executeQuery()) {
            long current = rs.next() ? rs.getLong(1) : -1;
            if (current != epoch) throw new Fenced(epoch, current);
        }
    }

    void fenced() {
        onFenced.run();
    }
}
