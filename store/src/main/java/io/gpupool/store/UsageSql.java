package io.gpupool.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;

/** Writes usage_grants rows (absolute values, so a batch applied twice leaves the same rows). */
final class UsageSql {
    private UsageSql() {}

    static void put(Connection c, Iterable<UsageGrantRow> rows) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO usage_grants (job_id, attempt, node, gpu, tenant, job_user, gpu_model, "
                + "milli, memory_mib, started_ms, ended_ms, used_gpu_ms, energy_j, metered_until_ms) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
                + "ON CONFLICT (job_id, attempt, node, gpu) DO UPDATE SET ended_ms = excluded.ended_ms, used_gpu_ms = excluded.used_gpu_ms, "
                + "energy_j = excluded.energy_j, metered_until_ms = excluded.metered_until_ms")) {
            int n = 0;
            for (UsageGrantRow u : rows) {
                ps.setString(1, u.jobId());
                ps.setInt(2, u.attempt());
                ps.setString(3, u.node());
                ps.setInt(4, u.gpu());
                ps.setString(5, u.tenant());
                ps.setString(6, u.user());
                ps.setString(7, u.gpuModel());
                ps.setInt(8, u.milli());
                ps.setLong(9, u.memoryMib());
                ps.setLong(10, u.startedMs());
                if (u.endedMs() == null) ps.setNull(11, Types.BIGINT);
                else ps.setLong(11, u.endedMs());
                ps.setDouble(12, u.usedGpuMs());
                ps.setDouble(13, u.energyJ());
                ps.setLong(14, u.meteredUntilMs());
                ps.addBatch();
                n++;
            }
            if (n > 0) ps.executeBatch();
        }
    }
}
