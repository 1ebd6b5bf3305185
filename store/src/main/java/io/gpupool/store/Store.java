package io.gpupool.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The service's durable store: every change goes through the one {@link GroupCommitWriter}; reads run on
 * pooled connections and see only committed data (what was acknowledged).
 */
public final class Store implements AutoCloseable {
    private static final String JOB_COLUMNS = "seq, id, tenant, idem_key, spec, state, submitted_ms, started_ms, ended_ms, preemptions, exit_code, message";

    private final Database db;
    private final GroupCommitWriter writer;

    public Store(Database db) {
        this.db = db;
        this.writer = new GroupCommitWriter(db);
    }

    public GroupCommitWriter writer() { return writer; }
    public Database database() { return db; }

    /** Everything a restarting service needs to carry on. */
    public RecoveredState recover() {
        try (Connection c = db.connection()) {
            List<TenantRow> tenants = query(c, "SELECT name, weight, guaranteed_gpus, limit_gpus, created_ms FROM tenants ORDER BY name",
                    rs -> new TenantRow(rs.getString(1), rs.getDouble(2), rs.getDouble(3), rs.getDouble(4), rs.getLong(5)));
            List<TokenRow> tokens = query(c, "SELECT id, hash, role, tenant, label, created_ms FROM tokens ORDER BY created_ms, id",
                    rs -> new TokenRow(rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4), rs.getString(5), rs.getLong(6)));
            List<NodeRow> nodes = query(c, "SELECT name, spec, source, cordoned, registered_ms FROM nodes ORDER BY registered_ms, name",
                    rs -> new NodeRow(rs.getString(1), rs.getString(2), rs.getString(3), rs.getInt(4) != 0, rs.getLong(5)));
            Map<String, String> settings = new LinkedHashMap<>();
            for (String[] kv : query(c, "SELECT name, value FROM settings", rs -> new String[] {rs.getString(1), rs.getString(2)})) {
                settings.put(kv[0], kv[1]);
            }
            List<JobRow> active = query(c, "SELECT " + JOB_COLUMNS + " FROM jobs WHERE state IN ('PENDING','RUNNING') ORDER BY seq", Store::job);
            Map<String, List<GrantRow>> allocations = new HashMap<>();
            for (Object[] r : query(c, "SELECT job_id, replica, node, gpu, milli, memory_mib, exclusive FROM allocations ORDER BY job_id, replica, node, gpu",
                    rs -> new Object[] {rs.getString(1), grant(rs, 2)})) {
                allocations.computeIfAbsent((String) r[0], k -> new ArrayList<>()).add((GrantRow) r[1]);
            }
            Map<String, String> idem = new HashMap<>();
            for (String[] r : query(c, "SELECT tenant, idem_key, id FROM jobs WHERE idem_key IS NOT NULL",
                    rs -> new String[] {rs.getString(1), rs.getString(2), rs.getString(3)})) {
                idem.put(r[0] + "\n" + r[1], r[2]);
            }
            long nextSeq = single(c, "SELECT COALESCE(MAX(seq), 0) FROM jobs") + 1;
            long nextEvent = Math.max(single(c, "SELECT COALESCE(MAX(id), 0) FROM job_events"),
                    single(c, "SELECT COALESCE(MAX(id), 0) FROM job_logs")) + 1;
            return new RecoveredState(tenants, tokens, nodes, settings, active, allocations, idem, nextSeq, nextEvent);
        } catch (SQLException e) {
            throw new StoreException("cannot read the store back", e);
        }
    }

    public Optional<JobRow> job(String id) {
        try (Connection c = db.connection()) {
            List<JobRow> rows = query(c, "SELECT " + JOB_COLUMNS + " FROM jobs WHERE id = ?", Store::job, id);
            return rows.stream().findFirst();
        } catch (SQLException e) {
            throw new StoreException("cannot read job " + id, e);
        }
    }

    /** A page of jobs in arrival order, after the cursor. */
    public List<JobRow> jobs(JobQuery q) {
        StringBuilder sql = new StringBuilder("SELECT " + JOB_COLUMNS + " FROM jobs WHERE seq > ?");
        List<Object> args = new ArrayList<>();
        args.add(q.afterSeq());
        if (q.tenant() != null) { sql.append(" AND tenant = ?"); args.add(q.tenant()); }
        if (!q.states().isEmpty()) {
            sql.append(" AND state IN (").append(String.join(",", q.states().stream().map(s -> "?").toList())).append(")");
            args.addAll(q.states().stream().sorted().toList());
        }
        if (q.sinceMs() != null) { sql.append(" AND submitted_ms >= ?"); args.add(q.sinceMs()); }
        if (q.untilMs() != null) { sql.append(" AND submitted_ms < ?"); args.add(q.untilMs()); }
        sql.append(" ORDER BY seq LIMIT ?");
        args.add(q.limit());
        try (Connection c = db.connection()) {
            return query(c, sql.toString(), Store::job, args.toArray());
        } catch (SQLException e) {
            throw new StoreException("cannot list jobs", e);
        }
    }

    public List<EventRow> events(String jobId) {
        try (Connection c = db.connection()) {
            return query(c, "SELECT id, job_id, at_ms, type, detail FROM job_events WHERE job_id = ? ORDER BY id",
                    rs -> new EventRow(rs.getLong(1), rs.getString(2), rs.getLong(3), rs.getString(4), rs.getString(5)), jobId);
        } catch (SQLException e) {
            throw new StoreException("cannot read events of " + jobId, e);
        }
    }

    public List<LogRow> logs(String jobId, long afterId, int limit) {
        try (Connection c = db.connection()) {
            return query(c, "SELECT id, job_id, at_ms, line FROM job_logs WHERE job_id = ? AND id > ? ORDER BY id LIMIT ?",
                    rs -> new LogRow(rs.getLong(1), rs.getString(2), rs.getLong(3), rs.getString(4)), jobId, afterId, limit);
        } catch (SQLException e) {
            throw new StoreException("cannot read logs of " + jobId, e);
        }
    }

    public List<GrantRow> allocation(String jobId) {
        try (Connection c = db.connection()) {
            return query(c, "SELECT replica, node, gpu, milli, memory_mib, exclusive FROM allocations WHERE job_id = ? ORDER BY replica, node, gpu",
                    rs -> grant(rs, 1), jobId);
        } catch (SQLException e) {
            throw new StoreException("cannot read the allocation of " + jobId, e);
        }
    }

    /** The saved run-time predictor of this kind, if one was saved. */
    public Optional<PredictorRow> predictor(String kind) {
        try (Connection c = db.connection()) {
            return query(c, "SELECT kind, state, jobs_learned, saved_ms FROM runtime_predictors WHERE kind = ?",
                    rs -> new PredictorRow(rs.getString(1), rs.getString(2), rs.getLong(3), rs.getLong(4)), kind).stream().findFirst();
        } catch (SQLException e) {
            throw new StoreException("cannot read the saved run-time predictor " + kind, e);
        }
    }

    /** Jobs per state (for tests and the crash check). */
    public Map<String, Long> countByState() {
        try (Connection c = db.connection()) {
            Map<String, Long> m = new LinkedHashMap<>();
            for (Object[] r : query(c, "SELECT state, COUNT(*) FROM jobs GROUP BY state ORDER BY state", rs -> new Object[] {rs.getString(1), rs.getLong(2)})) {
                m.put((String) r[0], (Long) r[1]);
            }
            return m;
        } catch (SQLException e) {
            throw new StoreException("cannot count jobs", e);
        }
    }

    /** True when a trivial query succeeds and the writer is committing (readiness). */
    public boolean ready() {
        if (!writer.healthy()) return false;
        try (Connection c = db.connection()) {
            return single(c, "SELECT 1") == 1;
        } catch (SQLException e) {
            return false;
        }
    }

    /** Commits everything handed to the writer, then closes the pool. */
    @Override
    public void close() {
        writer.close();
        db.close();
    }

    // ---- helpers --------------------------------------------------------------------------------

    private interface RowMapper<T> {
        T map(ResultSet rs) throws SQLException;
    }

    private static <T> List<T> query(Connection c, String sql, RowMapper<T> mapper, Object... args) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) ps.setObject(i + 1, args[i]);
            try (ResultSet rs = ps.executeQuery()) {
                List<T> out = new ArrayList<>();
                while (rs.next()) out.add(mapper.map(rs));
                return out;
            }
        }
    }

    private static long single(Connection c, String sql) throws SQLException {
        return query(c, sql, rs -> rs.getLong(1)).getFirst();
    }

    private static JobRow job(ResultSet rs) throws SQLException {
        return new JobRow(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getString(4), rs.getString(5), rs.getString(6),
                rs.getLong(7), nullableLong(rs, 8), nullableLong(rs, 9), rs.getInt(10), nullableInt(rs, 11), rs.getString(12));
    }

    private static GrantRow grant(ResultSet rs, int from) throws SQLException {
        return new GrantRow(rs.getInt(from), rs.getString(from + 1), rs.getInt(from + 2), rs.getInt(from + 3),
                rs.getLong(from + 4), rs.getInt(from + 5) != 0);
    }

    private static Long nullableLong(ResultSet rs, int i) throws SQLException {
        long v = rs.getLong(i);
        return rs.wasNull() ? null : v;
    }

    private static Integer nullableInt(ResultSet rs, int i) throws SQLException {
        int v = rs.getInt(i);
        return rs.wasNull() ? null : v;
    }
}
