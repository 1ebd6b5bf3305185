package io.gpupool.store;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Reads of the usage accounting tables (usage_grants, usage_jobs) on pooled connections. */
public final class UsageStore {
    private static final String GRANT_COLUMNS = "job_id, attempt, node, gpu, tenant, job_user, gpu_model, milli, memory_mib, started_ms, "
            + "ended_ms, used_gpu_ms, energy_j, metered_until_ms";

    /** A job that ended in the window, with its first start (null: never started) and where its attempts ran. */
    public record EndedJob(JobEndRow end, Long firstStartedMs, Set<String> nodes, Set<String> gpuModels) {}

    private final Database db;

    public UsageStore(Database db) {
        this.db = db;
    }

    /** Grants held at some time in [since, until), of one tenant or (null) all. */
    public List<UsageGrantRow> grants(long since, long until, String tenant) {
        String sql = "SELECT " + GRANT_COLUMNS + " FROM usage_grants WHERE started_ms < ? AND (ended_ms IS NULL OR ended_ms > ?)"
                + (tenant == null ? "" : " AND tenant = ?") + " ORDER BY started_ms, job_id, attempt, node, gpu";
        try (Connection c = db.connection()) {
            return tenant == null ? Store.query(c, sql, UsageStore::grant, until, since) : Store.query(c, sql, UsageStore::grant, until, since, tenant);
        } catch (SQLException e) {
            throw new StoreException("cannot read usage", e);
        }
    }

    /** Grants not yet released (read back at a restart, so metering carries on from what was stored). */
    public static List<UsageGrantRow> open(Connection c) throws SQLException {
        return Store.query(c, "SELECT " + GRANT_COLUMNS + " FROM usage_grants WHERE ended_ms IS NULL ORDER BY job_id, attempt, node, gpu", UsageStore::grant);
    }

    /** Jobs that reached a final state in [since, until), of one tenant or (null) all. */
    public List<EndedJob> endedJobs(long since, long until, String tenant) {
        String where = " WHERE j.ended_ms >= ? AND j.ended_ms < ?" + (tenant == null ? "" : " AND j.tenant = ?");
        Object[] args = tenant == null ? new Object[] {since, until} : new Object[] {since, until, tenant};
        try (Connection c = db.connection()) {
            Map<String, Object[]> jobs = new LinkedHashMap<>();
            for (Object[] r : Store.query(c, "SELECT j.job_id, j.tenant, j.job_user, j.state, j.submitted_ms, j.ended_ms, "
                    + "(SELECT MIN(a.started_ms) FROM usage_grants a WHERE a.job_id = j.job_id) FROM usage_jobs j" + where + " ORDER BY j.ended_ms, j.job_id",
                    rs -> new Object[] {new JobEndRow(rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4), rs.getLong(5), rs.getLong(6)),
                            nullableLong(rs, 7), new LinkedHashSet<String>(), new LinkedHashSet<String>()}, args)) {
                jobs.put(((JobEndRow) r[0]).jobId(), r);
            }
            for (String[] r : Store.query(c, "SELECT DISTINCT a.job_id, a.node, a.gpu_model FROM usage_grants a JOIN usage_jobs j ON j.job_id = a.job_id" + where,
                    rs -> new String[] {rs.getString(1), rs.getString(2), rs.getString(3)}, args)) {
                Object[] j = jobs.get(r[0]);
                if (j == null) continue;
                nodes(j).add(r[1]);
                models(j).add(r[2]);
            }
            List<EndedJob> out = new ArrayList<>(jobs.size());
            for (Object[] j : jobs.values()) out.add(new EndedJob((JobEndRow) j[0], (Long) j[1], Set.copyOf(nodes(j)), Set.copyOf(models(j))));
            return out;
        } catch (SQLException e) {
            throw new StoreException("cannot read ended jobs", e);
        }
    }

    @SuppressWarnings("unchecked")
    private static Set<String> nodes(Object[] j) { return (Set<String>) j[2]; }

    @SuppressWarnings("unchecked")
    private static Set<String> models(Object[] j) { return (Set<String>) j[3]; }

    private static UsageGrantRow grant(ResultSet rs) throws SQLException {
        return new UsageGrantRow(rs.getString(1), rs.getInt(2), rs.getString(3), rs.getInt(4), rs.getString(5), rs.getString(6), rs.getString(7),
                rs.getInt(8), rs.getLong(9), rs.getLong(10), nullableLong(rs, 11), rs.getDouble(12), rs.getDouble(13), rs.getLong(14));
    }

    private static Long nullableLong(ResultSet rs, int i) throws SQLException {
        long v = rs.getLong(i);
        return rs.wasNull() ? null : v;
    }
}
