package io.gpupool.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.OptionalLong;

/**
 * The lease that makes one server replica the active one (high availability on PostgreSQL, issue 18), on a connection
 * of its own.
 *
 * <p>The row {@code service_lease} holds the epoch (the fencing token, {@link WriteFence}), who holds it and until when,
 * on the database's clock. A replica takes the lease over with one conditional UPDATE (epoch + 1) when it has run out,
 * or at once when its holder's connection is gone: the holder of epoch e keeps the session-level advisory lock
 * (LOCK_KEY, e) on its lease connection, which PostgreSQL releases the moment that session ends (a killed process's
 * socket closes), so a standby that can take that lock knows the holder is gone without waiting for the expiry. A
 * paused holder keeps its session (and the lock); its lease runs out instead. Either way every later write of the old
 * holder is refused by the epoch check, so taking over early is never unsafe.
 */
public final class ServiceLease implements AutoCloseable {
    /** First key of the advisory locks (an arbitrary constant: "gpup"); the second is the epoch's low 32 bits. */
    static final int LOCK_KEY = 0x67707570;
    private static final String NOW_US = "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000)::bigint";

    /** The lease as read: its epoch, holder, the holder's URL and how long it still runs (negative: run out). */
    public record State(long epoch, String holder, String url, long remainingMs) {}

    private final Database db;
    private final String holder;
    private volatile String url;
    private final long ttlMs;
    private Connection conn;
    private volatile State lastSeen;
    /** The connection is new: the holder's advisory lock is not taken on it yet. */
    private boolean fresh;

    /** {@code holder}: this replica's id; {@code url}: where clients reach it; {@code ttlMs}: the lease's length. */
    public ServiceLease(Database db, String holder, String url, long ttlMs) {
        if (db.dialect() != Database.Dialect.POSTGRESQL) throw new IllegalArgumentException("a service lease needs PostgreSQL");
        this.db = db;
        this.holder = holder;
        this.url = url;
        this.ttlMs = ttlMs;
    }

    public long ttlMs() { return ttlMs; }

    /** The lease as last read by {@link #read} or {@link #tryAcquire} (null before). */
    public State lastSeen() { return lastSeen; }

    /** The URL written into the lease at the next takeover or renewal (where clients reach this replica). */
    public void advertise(String url) {
        this.url = url;
    }

    /** The lease as the database holds it now. */
    public synchronized State read() {
        try {
            return readOn(connection());
        } catch (SQLException e) {
            drop();
            throw new StoreException("cannot read the service lease", e);
        }
    }

    /**
     * Takes the lease over if it has run out or its holder's connection is gone; returns the new epoch, or empty when
     * another replica holds it.
     */
    public synchronized OptionalLong tryAcquire() {
        try {
            Connection c = connection();
            State s = readOn(c);
            boolean holderGone = false;
            if (s.remainingMs() > 0) {
                holderGone = lock(c, "pg_try_advisory_lock", s.epoch());
                if (!holderGone) return OptionalLong.empty();
            }
            try {
                c.setAutoCommit(false);
                long won = -1;
                try (PreparedStatement ps = c.prepareStatement("UPDATE service_lease SET epoch = epoch + 1, holder = ?, url = ?, expires_us = "
                        + NOW_US + " + ? WHERE id = 1 AND epoch = ? RETURNING epoch")) {
                    ps.setString(1, holder);
                    ps.setString(2, url);
                    ps.setLong(3, ttlMs * 1000);
                    ps.setLong(4, s.epoch());
                    try (ResultSet rs = ps.executeQuery()) {
                        if (rs.next()) won = rs.getLong(1);
                    }
                }
                // taken before the commit, so no replica reads the new epoch before its holder's lock exists
                if (won >= 0) lock(c, "pg_advisory_lock", won);
                c.commit();
                if (won >= 0) fresh = false;
                return won >= 0 ? OptionalLong.of(won) : OptionalLong.empty();
            } finally {
                if (holderGone) lock(c, "pg_advisory_unlock", s.epoch());
                c.setAutoCommit(true);
            }
        } catch (SQLException e) {
            drop();   // a session in doubt goes, with any lock it took
            throw new StoreException("cannot take the service lease", e);
        }
    }

    /** Extends the lease of {@code epoch} by the TTL; false when another replica has taken it over. */
    public synchronized boolean renew(long epoch) {
        try {
            Connection c = connection();
            try (PreparedStatement ps = c.prepareStatement("UPDATE service_lease SET expires_us = " + NOW_US + " + ?, url = ? WHERE id = 1 AND epoch = ?")) {
                ps.setLong(1, ttlMs * 1000);
                ps.setString(2, url);
                ps.setLong(3, epoch);
                if (ps.executeUpdate() == 0) return false;
            }
            // a new session (the old one broke) takes the holder's lock again; a standby checking it right now may win
            if (fresh) {
                lock(c, "pg_try_advisory_lock", epoch);
                fresh = false;
            }
            return true;
        } catch (SQLException e) {
            drop();
            throw new StoreException("cannot renew the service lease", e);
        }
    }

    private State readOn(Connection c) throws SQLException {
        try (Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT epoch, holder, url, (expires_us - " + NOW_US + ") / 1000 FROM service_lease WHERE id = 1")) {
            if (!rs.next()) throw new SQLException("the service_lease row is missing");
            State s = new State(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getLong(4));
            lastSeen = s;
            return s;
        }
    }

    private static boolean lock(Connection c, String function, long epoch) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT " + function + "(?, ?)")) {
            ps.setInt(1, LOCK_KEY);
            ps.setInt(2, (int) epoch);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && rs.getObject(1) instanceof Boolean b && b;
            }
        }
    }

    private Connection connection() throws SQLException {
        if (conn == null) {
            conn = db.dedicatedConnection();
            try (Statement st = conn.createStatement()) {
                // a takeover must not wait behind a paused replica's open transaction for long; a renewal must not hang
                st.execute("SET lock_timeout = '1s'");
                st.execute("SET statement_timeout = '" + Math.max(1000, ttlMs / 2) + "ms'");
            }
            fresh = true;
        }
        return conn;
    }

    private void drop() {
        if (conn == null) return;
        try {
            conn.close();
        } catch (SQLException ignored) {
            // a broken connection closes anyway
        }
        conn = null;
    }

    /** Ends the lease session: its advisory lock goes with it, so a standby takes over at its next poll. */
    @Override
    public synchronized void close() {
        drop();
    }
}
