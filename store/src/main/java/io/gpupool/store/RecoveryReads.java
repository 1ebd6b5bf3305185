package io.gpupool.store;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The reads that rebuild a service's state from the store: all of it ({@link Store#recover}: a restart, a takeover), or,
 * for the parts that belong to jobs, only the jobs changed by the writer's transactions after number {@code since}
 * ({@link StoreFollower}: a standby following the store). {@code since} {@value #ALL}: every job.
 */
final class RecoveryReads {
    static final long ALL = -1;

    private RecoveryReads() {}

    static RecoveredState all(Connection c) throws SQLException {
        return new RecoveredState(tenants(c), tokens(c), nodes(c), progress(c), settings(c), activeJobs(c), allocations(c, ALL),
                attemptStates(c, ALL), unfinishedAttempts(c, ALL), idempotency(c), nextSeq(c), nextEventId(c), UsageStore.open(c),
                arraysWithFailures(c), reservations(c));
    }

    static List<ReservationRow> reservations(Connection c) throws SQLException {
        return Store.query(c, "SELECT name, tenant, start_ms, end_ms, gpus, model, nodes, created_ms, created_by FROM reservations "
                        + "ORDER BY created_ms, name",
                rs -> new ReservationRow(rs.getString(1), rs.getString(2), rs.getLong(3), rs.getLong(4), rs.getString(5), rs.getString(6),
                        rs.getString(7), rs.getLong(8), rs.getString(9)));
    }

    static List<TenantRow> tenants(Connection c) throws SQLException {
        return Store.query(c, "SELECT name, weight, guaranteed_gpus, limit_gpus, created_ms, shared_account_nodes, "
                        + "default_time_limit_s, max_time_limit_s FROM tenants ORDER BY name",
                rs -> new TenantRow(rs.getString(1), rs.getDouble(2), rs.getDouble(3), rs.getDouble(4), rs.getLong(5), rs.getInt(6) != 0,
                        rs.getLong(7), rs.getLong(8)));
    }

    static List<TokenRow> tokens(Connection c) throws SQLException {
        return Store.query(c, "SELECT id, hash, role, tenant, label, created_ms, node, unix_user FROM tokens ORDER BY created_ms, id",
                rs -> new TokenRow(rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4), rs.getString(5), rs.getLong(6),
                        rs.getString(7), rs.getString(8)));
    }

    static List<NodeRow> nodes(Connection c) throws SQLException {
        return Store.query(c, "SELECT name, spec, source, cordoned, registered_ms FROM nodes ORDER BY registered_ms, name",
                rs -> new NodeRow(rs.getString(1), rs.getString(2), rs.getString(3), rs.getInt(4) != 0, rs.getLong(5)));
    }

    static Map<String, NodeProgress> progress(Connection c) throws SQLException {
        Map<String, NodeProgress> progress = new LinkedHashMap<>();
        for (NodeProgress p : Store.query(c, "SELECT name, desired_version, acked_status_seq, lease_epoch FROM nodes ORDER BY name",
                rs -> new NodeProgress(rs.getString(1), rs.getLong(2), rs.getLong(3), rs.getLong(4)))) {
            progress.put(p.node(), p);
        }
        return progress;
    }

    static Map<String, String> settings(Connection c) throws SQLException {
        Map<String, String> settings = new LinkedHashMap<>();
        for (String[] kv : Store.query(c, "SELECT name, value FROM settings", rs -> new String[] {rs.getString(1), rs.getString(2)})) {
            settings.put(kv[0], kv[1]);
        }
        return settings;
    }

    static List<JobRow> activeJobs(Connection c) throws SQLException {
        return Store.query(c, "SELECT " + Store.JOB_COLUMNS + " FROM jobs WHERE state IN ('PENDING','RUNNING') ORDER BY seq", Store::job);
    }

    static long activeCount(Connection c) throws SQLException {
        return Store.single(c, "SELECT COUNT(*) FROM jobs WHERE state IN ('PENDING','RUNNING')");
    }

    /** The jobs the writer changed after transaction {@code since}, whatever their state, in arrival order. */
    static List<JobRow> changedJobs(Connection c, long since) throws SQLException {
        return Store.query(c, "SELECT " + Store.JOB_COLUMNS + " FROM jobs WHERE change_seq > ? ORDER BY seq", Store::job, since);
    }

    /** The number of the writer's last transaction that changed a job (0: none since version 8). */
    static long lastChange(Connection c) throws SQLException {
        return Store.single(c, "SELECT COALESCE(MAX(change_seq), 0) FROM jobs");
    }

    /** What the jobs changed after {@code since} hold: job -> grants (in replica, node, GPU order), jobs in id order. */
    static Map<String, List<GrantRow>> allocations(Connection c, long since) throws SQLException {
        String sql = since == ALL
                ? "SELECT job_id, replica, node, gpu, milli, memory_mib, exclusive FROM allocations ORDER BY job_id, replica, node, gpu"
                : "SELECT a.job_id, a.replica, a.node, a.gpu, a.milli, a.memory_mib, a.exclusive FROM allocations a JOIN jobs j ON j.id = a.job_id "
                + "WHERE j.change_seq > ? ORDER BY a.job_id, a.replica, a.node, a.gpu";
        Map<String, List<GrantRow>> allocations = new HashMap<>();
        for (Object[] r : Store.query(c, sql, rs -> new Object[] {rs.getString(1), Store.grant(rs, 2)}, args(since))) {
            allocations.computeIfAbsent((String) r[0], k -> new ArrayList<>()).add((GrantRow) r[1]);
        }
        return allocations;
    }

    /** Running jobs' current attempt: job -> node -> state (of the jobs changed after {@code since}). */
    static Map<String, Map<String, String>> attemptStates(Connection c, long since) throws SQLException {
        Map<String, Map<String, String>> attemptStates = new HashMap<>();
        for (String[] r : Store.query(c, "SELECT a.job_id, a.node, a.state FROM job_attempts a JOIN jobs j ON j.id = a.job_id "
                + "AND j.attempt = a.attempt WHERE j.state = 'RUNNING'" + changedOnly(since) + " ORDER BY a.job_id, a.node",
                rs -> new String[] {rs.getString(1), rs.getString(2), rs.getString(3)}, args(since))) {
            attemptStates.computeIfAbsent(r[0], k -> new LinkedHashMap<>()).put(r[1], r[2]);
        }
        return attemptStates;
    }

    /** Attempts of queued jobs that their agents have not reported ended (they may still run): job -> node -> attempt. */
    static Map<String, Map<String, Integer>> unfinishedAttempts(Connection c, long since) throws SQLException {
        Map<String, Map<String, Integer>> unfinished = new HashMap<>();
        for (Object[] r : Store.query(c, "SELECT a.job_id, a.node, a.attempt FROM job_attempts a JOIN jobs j ON j.id = a.job_id "
                + "WHERE j.state = 'PENDING' AND a.state IN ('ASSIGNED','RUNNING','STOPPING')" + changedOnly(since)
                + " ORDER BY a.job_id, a.attempt, a.node",
                rs -> new Object[] {rs.getString(1), rs.getString(2), rs.getInt(3)}, args(since))) {
            unfinished.computeIfAbsent((String) r[0], k -> new LinkedHashMap<>()).put((String) r[1], (Integer) r[2]);
        }
        return unfinished;
    }

    /** (tenant + '\n' + key) of every stored job that had an idempotency key -> job id. */
    static Map<String, String> idempotency(Connection c) throws SQLException {
        Map<String, String> idem = new HashMap<>();
        for (String[] r : Store.query(c, "SELECT tenant, idem_key, id FROM jobs WHERE idem_key IS NOT NULL",
                rs -> new String[] {rs.getString(1), rs.getString(2), rs.getString(3)})) {
            idem.put(r[0] + "\n" + r[1], r[2]);
        }
        return idem;
    }

    /** Active arrays with a task that ended other than succeeded (what their afterok / afternotok waiters need). */
    static Set<String> arraysWithFailures(Connection c) throws SQLException {
        return new HashSet<>(Store.query(c, "SELECT DISTINCT array_id FROM jobs WHERE array_id IN "
                + "(SELECT array_id FROM jobs WHERE state IN ('PENDING','RUNNING') AND array_id IS NOT NULL) "
                + "AND state NOT IN ('PENDING','RUNNING','SUCCEEDED')", rs -> rs.getString(1)));
    }

    static long nextSeq(Connection c) throws SQLException {
        return Store.single(c, "SELECT COALESCE(MAX(seq), 0) FROM jobs") + 1;
    }

    static long nextEventId(Connection c) throws SQLException {
        return Store.single(c, "SELECT COALESCE(MAX(id), 0) FROM job_events") + 1;
    }

    private static String changedOnly(long since) {
        return since == ALL ? "" : " AND j.change_seq > ?";
    }

    private static Object[] args(long since) {
        return since == ALL ? new Object[0] : new Object[] {since};
    }
}
