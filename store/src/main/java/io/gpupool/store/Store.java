package io.gpupool.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The service's durable store: every change goes through the one {@link GroupCommitWriter}; reads run on
 * pooled connections and see only committed data (what was acknowledged).
 */
public final class Store implements AutoCloseable {
    static final String JOB_COLUMNS = "seq, id, tenant, idem_key, spec, state, submitted_ms, started_ms, ended_ms, preemptions, exit_code, message, attempt";
    private static final String ATTEMPT_COLUMNS = "job_id, attempt, node, grants, assigned_ms, state, pid, started_ms, ended_ms, exit_code, message";

    private final Database db;
    private final GroupCommitWriter writer;

    public Store(Database db) {
        this(db, null);
    }

    /** A store whose writes carry the fencing token {@code fence} (an active replica; null: none). */
    public Store(Database db, WriteFence fence) {
        this.db = db;
        this.writer = new GroupCommitWriter(db, fence);
    }

    public GroupCommitWriter writer() { return writer; }
    public Database database() { return db; }

    /** Everything a restarting service needs to carry on. */
    public RecoveredState recover() {
        try (Connection c = db.connection()) {
            return RecoveryReads.all(c);
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

    /** Every attempt of a job on every node, oldest first. */
    public List<AttemptRow> attempts(String jobId) {
        try (Connection c = db.connection()) {
            return query(c, "SELECT " + ATTEMPT_COLUMNS + " FROM job_attempts WHERE job_id = ? ORDER BY attempt, assigned_ms, node", Store::attempt, jobId);
        } catch (SQLException e) {
            throw new StoreException("cannot read the attempts of " + jobId, e);
        }
    }

    /** Up to {@code maxBytes} of an output stream from {@code offset}, with how much of it is stored. */
    public OutputSlice output(String jobId, int attempt, String node, String stream, long offset, int maxBytes) {
        try (Connection c = db.connection()) {
            long[] held = held(c, jobId, attempt, node, stream);
            List<Object[]> chunks = query(c, "SELECT start_offset, data FROM job_output WHERE job_id = ? AND attempt = ? AND node = ? "
                    + "AND stream = ? AND start_offset + bytes > ? ORDER BY start_offset",
                    rs -> new Object[] {rs.getLong(1), rs.getBytes(2)}, jobId, attempt, node, stream, offset);
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            for (Object[] ch : chunks) {
                long at = (Long) ch[0];
                byte[] data = (byte[]) ch[1];
                int from = (int) Math.max(0, offset - at);
                int len = Math.min(data.length - from, maxBytes - out.size());
                if (len <= 0) break;
                out.write(data, from, len);
            }
            return new OutputSlice(offset, out.toByteArray(), held[0], held[1] != 0);
        } catch (SQLException e) {
            throw new StoreException("cannot read the output of " + jobId, e);
        }
    }

    /** Whether the server placed this attempt on this node. */
    public boolean attemptExists(String jobId, int attempt, String node) {
        return attemptExists(jobId, attempt, node, null);
    }

    /**
     * Whether the server placed this attempt on this node, of the job submitted at {@code submittedMs} (null: of whichever
     * job has the id). A store restored from a backup gives out again the ids of jobs submitted after the backup.
     */
    public boolean attemptExists(String jobId, int attempt, String node, Long submittedMs) {
        try (Connection c = db.connection()) {
            if (submittedMs != null) {
                return !query(c, "SELECT 1 FROM job_attempts a JOIN jobs j ON j.id = a.job_id WHERE a.job_id = ? AND a.attempt = ? "
                        + "AND a.node = ? AND j.submitted_ms = ?", rs -> 1, jobId, attempt, node, submittedMs).isEmpty();
            }
            return !query(c, "SELECT 1 FROM job_attempts WHERE job_id = ? AND attempt = ? AND node = ?", rs -> 1, jobId, attempt, node).isEmpty();
        } catch (SQLException e) {
            throw new StoreException("cannot read the attempts of " + jobId, e);
        }
    }

    /** How many bytes of the stream are stored. */
    public long outputLength(String jobId, int attempt, String node, String stream) {
        try (Connection c = db.connection()) {
            return held(c, jobId, attempt, node, stream)[0];
        } catch (SQLException e) {
            throw new StoreException("cannot read the output of " + jobId, e);
        }
    }

    private static long[] held(Connection c, String jobId, int attempt, String node, String stream) throws SQLException {
        return query(c, "SELECT COALESCE(MAX(start_offset + bytes), 0), COALESCE(MAX(complete), 0) FROM job_output "
                + "WHERE job_id = ? AND attempt = ? AND node = ? AND stream = ?",
                rs -> new long[] {rs.getLong(1), rs.getLong(2)}, jobId, attempt, node, stream).getFirst();
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

    /** The tasks of an array per state; empty when there is no such array. */
    public Map<String, Long> arrayStates(String arrayId) {
        try (Connection c = db.connection()) {
            Map<String, Long> m = new LinkedHashMap<>();
            for (Object[] r : query(c, "SELECT state, COUNT(*) FROM jobs WHERE array_id = ? GROUP BY state ORDER BY state",
                    rs -> new Object[] {rs.getString(1), rs.getLong(2)}, arrayId)) {
                m.put((String) r[0], (Long) r[1]);
            }
            return m;
        } catch (SQLException e) {
            throw new StoreException("cannot count the tasks of array " + arrayId, e);
        }
    }

    /** A page of an array's tasks in index order (arrival order), after the cursor (a seq). */
    public List<JobRow> arrayTasks(String arrayId, long afterSeq, int limit) {
        try (Connection c = db.connection()) {
            return query(c, "SELECT " + JOB_COLUMNS + " FROM jobs WHERE array_id = ? AND seq > ? ORDER BY seq LIMIT ?", Store::job,
                    arrayId, afterSeq, limit);
        } catch (SQLException e) {
            throw new StoreException("cannot list the tasks of array " + arrayId, e);
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

    interface RowMapper<T> {
        T map(ResultSet rs) throws SQLException;
    }

    static <T> List<T> query(Connection c, String sql, RowMapper<T> mapper, Object... args) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) ps.setObject(i + 1, args[i]);
            try (ResultSet rs = ps.executeQuery()) {
                List<T> out = new ArrayList<>();
                while (rs.next()) out.add(mapper.map(rs));
                return out;
            }
        }
    }

    static long single(Connection c, String sql) throws SQLException {
        return query(c, sql, rs -> rs.getLong(1)).getFirst();
    }

    static JobRow job(ResultSet rs) throws SQLException {
        return new JobRow(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getString(4), rs.getString(5), rs.getString(6),
                rs.getLong(7), nullableLong(rs, 8), nullableLong(rs, 9), rs.getInt(10), nullableInt(rs, 11), rs.getString(12), rs.getInt(13));
    }

    private static AttemptRow attempt(ResultSet rs) throws SQLException {
        return new AttemptRow(rs.getString(1), rs.getInt(2), rs.getString(3), rs.getString(4), rs.getLong(5), rs.getString(6),
                nullableLong(rs, 7), nullableLong(rs, 8), nullableLong(rs, 9), nullableInt(rs, 10), rs.getString(11));
    }

    static GrantRow grant(ResultSet rs, int from) throws SQLException {
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
