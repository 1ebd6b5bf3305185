package io.gpupool.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Turns a batch of {@link Write}s into as few JDBC batches as possible inside the caller's transaction.
 * Writes are absolute, so for each job only its last state and last allocation are written; new jobs are
 * inserted before any update (an update always follows its insert in the batch's order).
 *
 * <p>A batch may be applied twice: when the database dies after making a commit durable but before answering,
 * the writer commits the same batch again. So an insert of a row that is there already does nothing, and
 * applying a batch again leaves the store as the first time.
 *
 * <p>Every job the batch touches (its row, its allocation, one of its attempts) gets the transaction's number in
 * {@code change_seq}, so a standby finds what changed since it last read ({@link StoreFollower}).
 */
final class BatchSql {
    private BatchSql() {}

    /** {@code change}: this transaction's number, greater than every stored {@code change_seq}. */
    static void apply(Connection c, List<Write> writes, long change) throws SQLException {
        List<JobRow> inserts = new ArrayList<>();
        Map<String, JobRow> updates = new LinkedHashMap<>();
        Map<String, List<GrantRow>> allocations = new LinkedHashMap<>();
        List<EventRow> events = new ArrayList<>();
        List<AttemptRow> attempts = new ArrayList<>();
        List<AttemptUpdate> attemptUpdates = new ArrayList<>();
        List<OutputChunk> output = new ArrayList<>();
        Map<String, NodeProgress> progress = new LinkedHashMap<>();
        Map<String, UsageGrantRow> usage = new LinkedHashMap<>();
        List<Write> other = new ArrayList<>();
        Set<String> specs = new LinkedHashSet<>();
        for (Write w : writes) {
            switch (w) {
                case Write.InsertJob i -> inserts.add(i.job());
                case Write.UpdateJob u -> updates.put(u.job().id(), u.job());
                case Write.SetAllocation a -> allocations.put(a.jobId(), a.grants());
                case Write.InsertEvent e -> events.add(e.event());
                case Write.InsertAttempt a -> attempts.add(a.attempt());
                case Write.UpdateAttempt u -> attemptUpdates.add(u.update());
                case Write.AppendOutput o -> output.add(o.chunk());
                case Write.PutNodeProgress p -> progress.put(p.progress().node(), p.progress());
                case Write.PutUsage u -> usage.put(u.usage().key(), u.usage());
                case Write.UpdateSpec u -> {
                    specs.add(u.jobId());   // an edit of a queued job: the standby must read it again
                    other.add(w);
                }
                default -> other.add(w);
            }
        }
        // the jobs whose allocation, attempts or spec change without a new row state: only their change_seq is set
        Set<String> touched = new LinkedHashSet<>(allocations.keySet());
        for (AttemptRow a : attempts) touched.add(a.jobId());
        for (AttemptUpdate u : attemptUpdates) touched.add(u.jobId());
        touched.addAll(specs);
        touched.removeAll(updates.keySet());
        for (JobRow j : inserts) touched.remove(j.id());
        insertJobs(c, inserts, change);
        updateJobs(c, updates.values(), change);
        touchJobs(c, touched, change);
        setAllocations(c, allocations);
        insertEvents(c, events);
        insertAttempts(c, attempts);
        updateAttempts(c, attemptUpdates);
        insertOutput(c, output);
        UsageSql.put(c, usage.values());
        for (Write w : other) applyOne(c, w);
        putProgress(c, progress.values()); // after PutNode: a node registered in this batch exists by now
    }

    private static void insertJobs(Connection c, List<JobRow> jobs, long change) throws SQLException {
        if (jobs.isEmpty()) return;
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO jobs (seq, id, tenant, idem_key, spec, state, submitted_ms, "
                + "started_ms, ended_ms, preemptions, exit_code, message, attempt, array_id, change_seq) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
                + "ON CONFLICT (id) DO NOTHING")) {
            for (JobRow j : jobs) {
                ps.setLong(1, j.seq());
                ps.setString(2, j.id());
                ps.setString(3, j.tenant());
                ps.setString(4, j.idemKey());
                ps.setString(5, j.spec());
                ps.setString(6, j.state());
                ps.setLong(7, j.submittedMs());
                setLong(ps, 8, j.startedMs());
                setLong(ps, 9, j.endedMs());
                ps.setInt(10, j.preemptions());
                setInt(ps, 11, j.exitCode());
                ps.setString(12, j.message());
                ps.setInt(13, j.attempt());
                ps.setString(14, j.arrayId());
                ps.setLong(15, change);
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    private static void updateJobs(Connection c, Iterable<JobRow> jobs, long change) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE jobs SET state = ?, started_ms = ?, ended_ms = ?, preemptions = ?, "
                + "exit_code = ?, message = ?, attempt = ?, change_seq = ? WHERE id = ?")) {
            int n = 0;
            for (JobRow j : jobs) {
                ps.setString(1, j.state());
                setLong(ps, 2, j.startedMs());
                setLong(ps, 3, j.endedMs());
                ps.setInt(4, j.preemptions());
                setInt(ps, 5, j.exitCode());
                ps.setString(6, j.message());
                ps.setInt(7, j.attempt());
                ps.setLong(8, change);
                ps.setString(9, j.id());
                ps.addBatch();
                n++;
            }
            if (n > 0) ps.executeBatch();
        }
    }

    private static void touchJobs(Connection c, Set<String> ids, long change) throws SQLException {
        if (ids.isEmpty()) return;
        try (PreparedStatement ps = c.prepareStatement("UPDATE jobs SET change_seq = ? WHERE id = ?")) {
            for (String id : ids) {
                ps.setLong(1, change);
                ps.setString(2, id);
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    private static void setAllocations(Connection c, Map<String, List<GrantRow>> byJob) throws SQLException {
        if (byJob.isEmpty()) return;
        try (PreparedStatement del = c.prepareStatement("DELETE FROM allocations WHERE job_id = ?");
             PreparedStatement ins = c.prepareStatement("INSERT INTO allocations (job_id, replica, node, gpu, milli, memory_mib, exclusive) "
                     + "VALUES (?,?,?,?,?,?,?)")) {
            int inserted = 0;
            for (var e : byJob.entrySet()) {
                del.setString(1, e.getKey());
                del.addBatch();
                for (GrantRow g : e.getValue()) {
                    ins.setString(1, e.getKey());
                    ins.setInt(2, g.replica());
                    ins.setString(3, g.node());
                    ins.setInt(4, g.gpu());
                    ins.setInt(5, g.milli());
                    ins.setLong(6, g.memoryMib());
                    ins.setInt(7, g.exclusive() ? 1 : 0);
                    ins.addBatch();
                    inserted++;
                }
            }
            del.executeBatch();
            if (inserted > 0) ins.executeBatch();
        }
    }

    private static void insertEvents(Connection c, List<EventRow> events) throws SQLException {
        if (events.isEmpty()) return;
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO job_events (id, job_id, at_ms, type, detail) VALUES (?,?,?,?,?) ON CONFLICT (id) DO NOTHING")) {
            for (EventRow e : events) {
                ps.setLong(1, e.id());
                ps.setString(2, e.jobId());
                ps.setLong(3, e.atMs());
                ps.setString(4, e.type());
                ps.setString(5, e.detail());
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    private static void insertAttempts(Connection c, List<AttemptRow> rows) throws SQLException {
        if (rows.isEmpty()) return;
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO job_attempts (job_id, attempt, node, grants, assigned_ms, state, pid, "
                + "started_ms, ended_ms, exit_code, message) VALUES (?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (job_id, attempt, node) DO NOTHING")) {
            for (AttemptRow a : rows) {
                ps.setString(1, a.jobId());
                ps.setInt(2, a.attempt());
                ps.setString(3, a.node());
                ps.setString(4, a.grants());
                ps.setLong(5, a.assignedMs());
                ps.setString(6, a.state());
                setLong(ps, 7, a.pid());
                setLong(ps, 8, a.startedMs());
                setLong(ps, 9, a.endedMs());
                setInt(ps, 10, a.exitCode());
                ps.setString(11, a.message());
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    /** An attempt update's guard: where it names a submit instant, only the attempt of the job submitted then changes. */
    private static final String OF_THE_JOB_SUBMITTED_THEN = " AND (CAST(? AS BIGINT) IS NULL OR EXISTS (SELECT 1 FROM jobs "
            + "WHERE jobs.id = job_attempts.job_id AND jobs.submitted_ms = CAST(? AS BIGINT)))";

    /**
     * Start reports (RUNNING) first, then the others in hand-in order. RUNNING replaces only ASSIGNED but
     * always records pid and start time; any other state applies only to an attempt that has not ended, except
     * that an agent's own verdict replaces the server's LOST. So a late or repeated report never reopens an end.
     */
    private static void updateAttempts(Connection c, List<AttemptUpdate> updates) throws SQLException {
        if (updates.isEmpty()) return;
        try (PreparedStatement started = c.prepareStatement("UPDATE job_attempts SET "
                + "state = CASE WHEN state = 'ASSIGNED' THEN 'RUNNING' ELSE state END, pid = COALESCE(?, pid), started_ms = COALESCE(?, started_ms), "
                + "message = CASE WHEN state IN ('ASSIGNED', 'RUNNING') THEN COALESCE(?, message) ELSE message END "
                + "WHERE job_id = ? AND attempt = ? AND node = ?" + OF_THE_JOB_SUBMITTED_THEN);
             PreparedStatement other = c.prepareStatement("UPDATE job_attempts SET state = ?, pid = COALESCE(?, pid), "
                + "started_ms = COALESCE(?, started_ms), ended_ms = COALESCE(?, ended_ms), exit_code = COALESCE(?, exit_code), "
                + "message = COALESCE(?, message) WHERE job_id = ? AND attempt = ? AND node = ? "
                + "AND (state IN ('ASSIGNED', 'RUNNING', 'STOPPING') OR (state = 'LOST' AND CAST(? AS VARCHAR(16)) IN ('SUCCEEDED', 'FAILED', 'STOPPED', 'TIMEOUT')))"
                + OF_THE_JOB_SUBMITTED_THEN)) {
            int nStarted = 0;
            int nOther = 0;
            for (AttemptUpdate u : updates) {
                if ("RUNNING".equals(u.state())) {
                    setLong(started, 1, u.pid());
                    setLong(started, 2, u.startedMs());
                    started.setString(3, u.message());
                    started.setString(4, u.jobId());
                    started.setInt(5, u.attempt());
                    started.setString(6, u.node());
                    setLong(started, 7, u.submittedMs());
                    setLong(started, 8, u.submittedMs());
                    started.addBatch();
                    nStarted++;
                } else {
                    other.setString(1, u.state());
                    setLong(other, 2, u.pid());
                    setLong(other, 3, u.startedMs());
                    setLong(other, 4, u.endedMs());
                    setInt(other, 5, u.exitCode());
                    other.setString(6, u.message());
                    other.setString(7, u.jobId());
                    other.setInt(8, u.attempt());
                    other.setString(9, u.node());
                    other.setString(10, u.state());
                    setLong(other, 11, u.submittedMs());
                    setLong(other, 12, u.submittedMs());
                    other.addBatch();
                    nOther++;
                }
            }
            if (nStarted > 0) started.executeBatch();
            if (nOther > 0) other.executeBatch();
        }
    }

    private static void insertOutput(Connection c, List<OutputChunk> chunks) throws SQLException {
        if (chunks.isEmpty()) return;
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO job_output (job_id, attempt, node, stream, start_offset, bytes, data, "
                + "complete, at_ms) VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT (job_id, attempt, node, stream, start_offset) DO NOTHING")) {
            for (OutputChunk o : chunks) {
                ps.setString(1, o.jobId());
                ps.setInt(2, o.attempt());
                ps.setString(3, o.node());
                ps.setString(4, o.stream());
                ps.setLong(5, o.offset());
                ps.setInt(6, o.data().length);
                ps.setBytes(7, o.data());
                ps.setInt(8, o.complete() ? 1 : 0);
                ps.setLong(9, o.atMs());
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    private static void putProgress(Connection c, Iterable<NodeProgress> progress) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE nodes SET desired_version = ?, acked_status_seq = ?, lease_epoch = ? WHERE name = ?")) {
            int n = 0;
            for (NodeProgress p : progress) {
                ps.setLong(1, p.desiredVersion());
                ps.setLong(2, p.ackedStatusSeq());
                ps.setLong(3, p.leaseEpoch());
                ps.setString(4, p.node());
                ps.addBatch();
                n++;
            }
            if (n > 0) ps.executeBatch();
        }
    }

    private static void applyOne(Connection c, Write w) throws SQLException {
        switch (w) {
            case Write.PutTenant(TenantRow t) -> update(c, "INSERT INTO tenants (name, weight, guaranteed_gpus, limit_gpus, created_ms, "
                    + "shared_account_nodes, default_time_limit_s, max_time_limit_s) VALUES (?,?,?,?,?,?,?,?) ON CONFLICT (name) DO UPDATE SET "
                    + "weight = excluded.weight, guaranteed_gpus = excluded.guaranteed_gpus, limit_gpus = excluded.limit_gpus, "
                    + "shared_account_nodes = excluded.shared_account_nodes, default_time_limit_s = excluded.default_time_limit_s, "
                    + "max_time_limit_s = excluded.max_time_limit_s",
                    t.name(), t.weight(), t.guaranteedGpus(), t.limitGpus(), t.createdMs(), t.sharedAccountNodes() ? 1 : 0,
                    t.defaultTimeLimitSec(), t.maxTimeLimitSec());
            case Write.PutToken(TokenRow t) -> update(c, "INSERT INTO tokens (id, hash, role, tenant, label, created_ms, node, unix_user) "
                    + "VALUES (?,?,?,?,?,?,?,?) ON CONFLICT (id) DO NOTHING",
                    t.id(), t.hash(), t.role(), t.tenant(), t.label(), t.createdMs(), t.node(), t.unixUser());
            case Write.UpdateSpec(String id, String spec) -> update(c, "UPDATE jobs SET spec = ? WHERE id = ?", spec, id);
            case Write.DeleteToken(String id) -> update(c, "DELETE FROM tokens WHERE id = ?", id);
            case Write.PutReservation(ReservationRow r) -> update(c, "INSERT INTO reservations (name, tenant, start_ms, end_ms, gpus, model, "
                    + "nodes, created_ms, created_by) VALUES (?,?,?,?,?,?,?,?,?)", r.name(), r.tenant(), r.startMs(), r.endMs(), r.gpus(),
                    r.model(), r.nodes(), r.createdMs(), r.createdBy());
            case Write.DeleteReservation(String name) -> update(c, "DELETE FROM reservations WHERE name = ?", name);
            case Write.PutNode(NodeRow n) -> update(c, "INSERT INTO nodes (name, spec, source, cordoned, registered_ms) VALUES (?,?,?,?,?) "
                    + "ON CONFLICT (name) DO UPDATE SET spec = excluded.spec, source = excluded.source, cordoned = excluded.cordoned",
                    n.name(), n.spec(), n.source(), n.cordoned() ? 1 : 0, n.registeredMs());
            case Write.PutSetting(String name, String value) -> update(c, "INSERT INTO settings (name, value) VALUES (?,?) "
                    + "ON CONFLICT (name) DO UPDATE SET value = excluded.value", name, value);
            case Write.PutPredictor(PredictorRow p) -> update(c, "INSERT INTO runtime_predictors (kind, state, jobs_learned, saved_ms) VALUES (?,?,?,?) "
                    + "ON CONFLICT (kind) DO UPDATE SET state = excluded.state, jobs_learned = excluded.jobs_learned, saved_ms = excluded.saved_ms",
                    p.kind(), p.state(), p.jobsLearned(), p.savedMs());
            case Write.PutJobEnd(JobEndRow j) -> update(c, "INSERT INTO usage_jobs (job_id, tenant, job_user, state, submitted_ms, ended_ms) "
                    + "VALUES (?,?,?,?,?,?) ON CONFLICT (job_id) DO UPDATE SET state = excluded.state, ended_ms = excluded.ended_ms",
                    j.jobId(), j.tenant(), j.user(), j.state(), j.submittedMs(), j.endedMs());
            default -> throw new IllegalArgumentException("not a single write: " + w);
        }
    }

    private static void update(Connection c, String sql, Object... args) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                if (args[i] == null) ps.setNull(i + 1, Types.VARCHAR);
                else ps.setObject(i + 1, args[i]);
            }
            ps.executeUpdate();
        }
    }

    private static void setLong(PreparedStatement ps, int i, Long v) throws SQLException {
        if (v == null) ps.setNull(i, Types.BIGINT);
        else ps.setLong(i, v);
    }

    private static void setInt(PreparedStatement ps, int i, Integer v) throws SQLException {
        if (v == null) ps.setNull(i, Types.INTEGER);
        else ps.setInt(i, v);
    }
}
