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

    /**
     * A finished job of the history (docs/architecture.md, "History as a trace"): its stored request, end and the GPU
     * grants of all its attempts (none: it never started).
     */
    public record FinishedJob(String jobId, long seq, String tenant, String spec, String state, long submittedMs, long endedMs,
                              List<UsageGrantRow> grants) {}

    /**
     * The finished jobs submitted in a window, in submit order (then arrival order), at most {@code limit} of them.
     *
     * @param more       more finished jobs were submitted in the window than the limit
     * @param unfinished jobs submitted in the window that are still queued or running (not in {@code jobs})
     */
    public record FinishedJobs(List<FinishedJob> jobs, boolean more, long unfinished) {}

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

    /**
     * Jobs submitted in [since, until) that reached a final state, of one tenant or (null) all, with their grants.
     * Reads usage_jobs by its end-time index (a job submitted at or after since ended after since), so a window costs
     * what it holds, not the whole job table.
     */
    public FinishedJobs finishedJobs(long since, long until, String tenant, int limit) {
        String where = " WHERE u.ended_ms >= ? AND u.submitted_ms >= ? AND u.submitted_ms < ?" + (tenant == null ? "" : " AND u.tenant = ?");
        Object[] args = tenant == null ? new Object[] {since, since, until} : new Object[] {since, since, until, tenant};
        try (Connection c = db.connection()) {
            Map<String, Object[]> jobs = new LinkedHashMap<>();
            Object[] limited = java.util.Arrays.copyOf(args, args.length + 1);
            limited[args.length] = limit + 1;
            for (Object[] r : Store.query(c, "SELECT u.job_id, j.seq, u.tenant, j.spec, u.state, u.submitted_ms, u.ended_ms FROM usage_jobs u "
                    + "JOIN jobs j ON j.id = u.job_id" + where + " ORDER BY u.submitted_ms, j.seq LIMIT ?",
                    rs -> new Object[] {rs.getString(1), rs.getLong(2), rs.getString(3), rs.getString(4), rs.getString(5), rs.getLong(6), rs.getLong(7),
                            new ArrayList<UsageGrantRow>()}, limited)) {
                jobs.put((String) r[0], r);
            }
            boolean more = jobs.size() > limit;
            for (UsageGrantRow g : Store.query(c, "SELECT " + GRANT_COLUMNS.replaceAll("(^|, )", "$1g.") + " FROM usage_grants g JOIN usage_jobs u ON u.job_id = g.job_id"
                    + where + " ORDER BY g.job_id, g.attempt, g.node, g.gpu", UsageStore::grant, args)) {
                Object[] j = jobs.get(g.jobId());
                if (j != null) grants(j).add(g);
            }
            String active = "SELECT COUNT(*) FROM jobs WHERE state IN ('PENDING', 'RUNNING') AND submitted_ms >= ? AND submitted_ms < ?"
                    + (tenant == null ? "" : " AND tenant = ?");
            long unfinished = Store.query(c, active, rs -> rs.getLong(1), tenant == null ? new Object[] {since, until} : new Object[] {since, until, tenant}).getFirst();
            List<FinishedJob> out = new ArrayList<>();
            for (Object[] j : jobs.values()) {
                if (out.size() == limit) break;
                out.add(new FinishedJob((String) j[0], (Long) j[1], (String) j[2], (String) j[3], (String) j[4], (Long) j[5], (Long) j[6], List.copyOf(grants(j))));
            }
            return new FinishedJobs(out, more, unfinished);
        } catch (SQLException e) {
            throw new StoreException("cannot read the history", e);
        }
    }

    @SuppressWarnings("unchecked")
    private static List<UsageGrantRow> grants(Object[] j) { return (List<UsageGrantRow>) j[7]; }

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
