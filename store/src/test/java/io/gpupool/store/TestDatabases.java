package io.gpupool.store;

import org.junit.jupiter.api.Assumptions;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;

/**
 * Databases for tests: a fresh embedded SQLite file, or a fresh database in the PostgreSQL cluster that
 * .ci/services.sh started (GPUPOOL_TEST_PG_URL). Without that variable a PostgreSQL test skips with a
 * message, except in CI (GPUPOOL_CI=1), where it fails: CI must run the storage tests on both.
 */
public final class TestDatabases {
    public static final String PG_ENV = "GPUPOOL_TEST_PG_URL";

    private TestDatabases() {}

    public static String sqliteUrl(Path dir) {
        return "jdbc:sqlite:" + dir.toAbsolutePath().resolve(Database.EMBEDDED_FILE);
    }

    /** A JDBC URL of a new, empty PostgreSQL database. */
    public static String freshPostgresUrl() {
        String base = System.getenv(PG_ENV);
        if (base == null || base.isBlank()) {
            String why = PG_ENV + " is not set: start PostgreSQL with `source .ci/services.sh && gpupool_services`";
            if (inCi()) throw new AssertionError("CI must run the PostgreSQL tests, but " + why);
            Assumptions.abort("skipped: " + why);
        }
        String name = "t_" + UUID.randomUUID().toString().replace("-", "").substring(0, 16);
        try (Connection c = DriverManager.getConnection(base); Statement st = c.createStatement()) {
            st.execute("CREATE DATABASE " + name);
        } catch (SQLException e) {
            throw new AssertionError("cannot create a test database at " + base + ": " + e.getMessage(), e);
        }
        int q = base.indexOf('?');
        String path = q < 0 ? base : base.substring(0, q);
        String params = q < 0 ? "" : base.substring(q);
        return path.substring(0, path.lastIndexOf('/') + 1) + name + params;
    }

    public static boolean inCi() {
        String ci = System.getenv("GPUPOOL_CI");
        return ci != null && !ci.isBlank() && !ci.equals("0");
    }
}
