package io.gpupool.store;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.gpupool.model.SpecException;
import org.flywaydb.core.Flyway;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;

/**
 * A connection pool to the service's database with its schema migrated to the latest version.
 *
 * <p>Embedded: SQLite in WAL mode with {@code synchronous=FULL}, so a commit is on disk (fsync) before it
 * returns: an acknowledged job survives a crash of the process and of the machine. PostgreSQL: its default
 * {@code synchronous_commit=on} gives the same. Migrations are Flyway scripts under {@code db/migration}
 * that both databases run unchanged.
 */
public final class Database implements AutoCloseable {
    public enum Dialect { SQLITE, POSTGRESQL }

    public static final String EMBEDDED_FILE = "gpupool.db";

    private final HikariDataSource pool;
    private final Dialect dialect;
    private final String url;

    private Database(HikariDataSource pool, Dialect dialect, String url) {
        this.pool = pool;
        this.dialect = dialect;
        this.url = url;
    }

    /** The embedded database under {@code dataDir} (created if missing). */
    public static Database embedded(Path dataDir) {
        try {
            Files.createDirectories(dataDir);
        } catch (IOException e) {
            throw new SpecException("--data " + dataDir, "data", "cannot create the data directory: " + e.getMessage());
        }
        return open("jdbc:sqlite:" + dataDir.toAbsolutePath().resolve(EMBEDDED_FILE));
    }

    /** A database by JDBC URL: {@code jdbc:sqlite:FILE} or {@code jdbc:postgresql://HOST:PORT/DB?user=..&password=..}. */
    public static Database open(String jdbcUrl) {
        Dialect dialect;
        HikariConfig cfg = new HikariConfig();
        cfg.setJdbcUrl(jdbcUrl);
        cfg.setPoolName("gpupool-store");
        // How long a caller waits for a connection. A pool hands one out at once while the database is up; with it
        // down, this is how long a read waits before its 503 and how long the writer takes to notice (and the server
        // to refuse changes). It was 10 s: every read of a job hung 10 s while PostgreSQL was down.
        cfg.setConnectionTimeout(2_000);
        if (jdbcUrl.startsWith("jdbc:sqlite:")) {
            dialect = Dialect.SQLITE;
            cfg.setDriverClassName("org.sqlite.JDBC");
            // WAL: readers never block the writer; FULL: every commit is fsynced.
            cfg.addDataSourceProperty("journal_mode", "WAL");
            cfg.addDataSourceProperty("synchronous", "FULL");
            cfg.addDataSourceProperty("busy_timeout", "10000");
            cfg.setMaximumPoolSize(6);
        } else if (jdbcUrl.startsWith("jdbc:postgresql:")) {
            dialect = Dialect.POSTGRESQL;
            cfg.setDriverClassName("org.postgresql.Driver");
            // one multi-row INSERT per JDBC batch instead of one round trip per row
            cfg.addDataSourceProperty("reWriteBatchedInserts", "true");
            // a transaction left open by a paused process (SIGSTOP, a long GC) would hold the lease row's share lock and
            // keep a takeover waiting (high availability): the database ends such a session after 3 s
            cfg.setConnectionInitSql("SET idle_in_transaction_session_timeout = 3000");
            cfg.setMaximumPoolSize(8);
        } else {
            throw new SpecException("--db", "db", "must be a jdbc:sqlite:FILE or jdbc:postgresql://HOST/DB URL, got '" + jdbcUrl + "'");
        }
        HikariDataSource pool;
        try {
            pool = new HikariDataSource(cfg);
        } catch (RuntimeException e) {
            throw new SpecException("--db " + redact(jdbcUrl), "db", "cannot connect: " + rootMessage(e));
        }
        try {
            // the one type name SQLite and PostgreSQL do not share: binary data
            Flyway.configure().dataSource(pool).locations("classpath:db/migration")
                    .placeholders(java.util.Map.of("binary", dialect == Dialect.SQLITE ? "BLOB" : "BYTEA")).load().migrate();
        } catch (RuntimeException e) {
            pool.close();
            throw new IllegalStateException("cannot migrate the database schema at " + redact(jdbcUrl) + ": " + rootMessage(e), e);
        }
        return new Database(pool, dialect, jdbcUrl);
    }

    public Connection connection() throws SQLException {
        return pool.getConnection();
    }

    /**
     * A connection of its own, outside the pool (the service lease's): it lives as long as the caller keeps it, and a
     * dead database or network fails its calls within seconds rather than TCP's minutes.
     */
    public Connection dedicatedConnection() throws SQLException {
        java.util.Properties p = new java.util.Properties();
        p.setProperty("connectTimeout", "2");
        p.setProperty("socketTimeout", "5");
        return java.sql.DriverManager.getConnection(url, p);
    }

    public Dialect dialect() { return dialect; }

    /** The URL without credentials, for logs. */
    public String describe() { return redact(url); }

    @Override
    public void close() {
        pool.close();
    }

    static String redact(String url) {
        return url.replaceAll("(?i)(password=)[^&]*", "$1***");
    }

    private static String rootMessage(Throwable t) {
        while (t.getCause() != null && t.getCause() != t) t = t.getCause();
        return t.getMessage();
    }
}
