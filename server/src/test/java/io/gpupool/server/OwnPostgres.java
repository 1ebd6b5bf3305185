package io.gpupool.server;

import io.gpupool.store.TestDatabases;
import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipal;
import java.time.Duration;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A PostgreSQL cluster a test owns, so that it may crash it: initdb into a temp dir, the postmaster on a free
 * loopback port, as .ci/services.sh does (as the user postgres when root). The postmaster runs as a child of
 * this JVM rather than through {@code pg_ctl start}: pg_ctl hands it to init, and where init does not reap
 * (a container's) a killed postmaster stays a zombie whose pid in postmaster.pid blocks the restart.
 */
final class OwnPostgres implements AutoCloseable {
    private static final String USER = "postgres";
    private static final String NO_STANDBY = "gpupool_test_no_such_standby";
    private final Path bin;
    private final Path dir;
    private final Path data;
    private final int port;
    private final boolean root;
    private final String group;   // the postgres user's group (root only)
    private Process postmaster;

    private OwnPostgres(Path bin, Path dir, int port, boolean root, String group) {
        this.bin = bin;
        this.dir = dir;
        this.data = dir.resolve("data");
        this.port = port;
        this.root = root;
        this.group = group;
    }

    /** A new cluster, started; skips the test (fails it in CI) when the PostgreSQL binaries are not installed. */
    static OwnPostgres startOrSkip() throws Exception {
        Path bin = binaries();
        if (bin == null) {
            String why = "PostgreSQL binaries not found under /usr/lib/postgresql/*/bin (apt-get install postgresql)";
            if (TestDatabases.inCi()) throw new AssertionError("CI must run the PostgreSQL crash tests, but " + why);
            Assumptions.abort("skipped: " + why);
        }
        boolean root = "root".equals(System.getProperty("user.name"));
        Path dir = Files.createTempDirectory("gpupool-pg");
        String group = null;
        if (root) {
            // initdb refuses to run as root; the binaries may be there without the packages' postgres user
            if (run(List.of("id", USER)).isEmpty()) run(List.of("useradd", "--system", "--no-create-home", USER));
            group = run(List.of("id", "-g", USER)).trim();
            UserPrincipal pg = dir.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName(USER);
            Files.setOwner(dir, pg);
        }
        OwnPostgres c = new OwnPostgres(bin, dir, freePort(), root, group);
        try {
            List<String> initdb = c.asPostgres(bin.resolve("initdb").toString(), "-D", c.data.toString(), "-U", "gpupool", "--auth=trust", "-E", "UTF8");
            Process p = new ProcessBuilder(initdb).redirectErrorStream(true).redirectOutput(dir.resolve("initdb.log").toFile()).start();
            if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new AssertionError("initdb failed: " + Files.readString(dir.resolve("initdb.log")));
            }
            c.start();
            return c;
        } catch (Throwable t) {
            c.close();
            throw t;
        }
    }

    /** JDBC URL of a database in this cluster. */
    String url(String database) {
        return "jdbc:postgresql://127.0.0.1:" + port + "/" + database + "?user=gpupool";
    }

    String createDatabase(String name) throws SQLException {
        try (Connection c = DriverManager.getConnection(url("postgres")); Statement st = c.createStatement()) {
            st.execute("CREATE DATABASE " + name);
        }
        return url(name);
    }

    /** Starts the postmaster on the data directory (after a crash: crash recovery) and waits until it takes connections. */
    void start() throws Exception {
        List<String> cmd = asPostgres(bin.resolve("postgres").toString(), "-D", data.toString(), "-p", String.valueOf(port),
                "-k", dir.toString(), "-c", "listen_addresses=127.0.0.1", "-c", "max_connections=50", "-c", "shared_buffers=32MB");
        postmaster = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("server.log").toFile())).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try (Connection c = DriverManager.getConnection(url("postgres"))) {
                return;
            } catch (SQLException e) {
                if (!postmaster.isAlive()) throw new AssertionError("PostgreSQL did not start: " + log());
                if (System.nanoTime() > deadline) throw new AssertionError("PostgreSQL did not take connections within 60 s: " + log());
                Thread.sleep(50);
            }
        }
    }

    /**
     * From now on a commit is made durable here and then waits for a synchronous standby that never connects (as
     * when a primary has lost its standby): the client gets no answer. A crash then leaves such commits on disk,
     * never acknowledged to their client. Undone by {@link #stopHoldingCommits} while the cluster is down.
     */
    void holdCommitsAfterFlush() throws SQLException {
        try (Connection c = DriverManager.getConnection(url("postgres")); Statement st = c.createStatement()) {
            st.execute("ALTER SYSTEM SET synchronous_standby_names = '" + NO_STANDBY + "'");
            st.execute("SELECT pg_reload_conf()");
        }
    }

    /** Waits until a commit waits for the standby (durable here, its client not answered). */
    void awaitHeldCommit(Duration limit) throws Exception {
        long deadline = System.nanoTime() + limit.toNanos();
        try (Connection c = DriverManager.getConnection(url("postgres"));
             PreparedStatement held = c.prepareStatement("SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'")) {
            while (true) {
                try (ResultSet rs = held.executeQuery()) {
                    rs.next();
                    if (rs.getInt(1) > 0) return;
                }
                if (System.nanoTime() > deadline) throw new AssertionError("no commit waited for the standby within " + limit.toSeconds() + " s");
                Thread.sleep(5);   // on one connection: the check takes a millisecond, so the hold is short
            }
        }
    }

    /** Forgets the standby (ALTER SYSTEM's file, edited while the cluster is down), so that a restart commits again. */
    void stopHoldingCommits() throws IOException {
        if (postmaster != null) throw new IllegalStateException("the cluster is running");
        Path auto = data.resolve("postgresql.auto.conf");
        List<String> kept = Files.readAllLines(auto).stream().filter(l -> !l.contains(NO_STANDBY)).toList();
        Files.write(auto, kept);
    }

    /**
     * kill -9 of the postmaster (the pid in postmaster.pid), then of every backend and helper it had (they stop
     * serving when the postmaster dies, but only when they next notice): the database is gone as after a machine
     * crash. Returns once none of its processes is left.
     */
    void crash() throws Exception {
        long pid = Long.parseLong(Files.readAllLines(data.resolve("postmaster.pid")).getFirst().trim());
        if (postmaster == null || pid != postmaster.pid()) throw new AssertionError("postmaster.pid names " + pid + ", not the running postmaster");
        killAll();
    }

    /** SIGKILL to the postmaster, then to every process it left behind; returns once none is left. */
    private void killAll() throws Exception {
        if (postmaster != null) {
            postmaster.destroyForcibly();
            if (!postmaster.waitFor(30, TimeUnit.SECONDS)) throw new AssertionError("the postmaster outlived SIGKILL");
            postmaster = null;
        }
        // its children: every process whose working directory is the data directory (a dead postmaster forks none)
        Path cwd = data.toRealPath();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        List<ProcessHandle> left;
        while (!(left = processesIn(cwd)).isEmpty()) {
            if (System.nanoTime() > deadline) throw new AssertionError("PostgreSQL processes outlived SIGKILL: " + left);
            left.forEach(ProcessHandle::destroyForcibly);
            Thread.sleep(20);
        }
    }

    String log() {
        try {
            return Files.readString(dir.resolve("server.log"));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    @Override
    public void close() throws Exception {
        try {
            if (Files.isDirectory(data)) killAll();
        } finally {
            try (Stream<Path> all = Files.walk(dir)) {
                for (Path p : all.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
            }
        }
    }

    private List<String> asPostgres(String... cmd) {
        List<String> out = new ArrayList<>();
        // setpriv execs the command (runuser would stay in between as its parent)
        if (root) out.addAll(List.of("setpriv", "--reuid=" + USER, "--regid=" + group, "--init-groups", "--"));
        out.addAll(List.of(cmd));
        return out;
    }

    /** Processes whose working directory is {@code dir} (a zombie has none: it is dead already). */
    private static List<ProcessHandle> processesIn(Path dir) throws IOException {
        List<ProcessHandle> out = new ArrayList<>();
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            for (Path p : procs.toList()) {
                String name = p.getFileName().toString();
                if (!name.chars().allMatch(Character::isDigit)) continue;
                try {
                    if (Files.readSymbolicLink(p.resolve("cwd")).equals(dir)) ProcessHandle.of(Long.parseLong(name)).ifPresent(out::add);
                } catch (IOException | SecurityException e) {
                    // gone, a zombie, or not ours to read
                }
            }
        }
        return out;
    }

    /** The newest installed PostgreSQL (Debian's layout, as .ci/services.sh looks for it). */
    private static Path binaries() throws IOException {
        Path root = Path.of("/usr/lib/postgresql");
        if (!Files.isDirectory(root)) return null;
        try (Stream<Path> versions = Files.list(root)) {
            return versions.map(v -> v.resolve("bin")).filter(b -> Files.isExecutable(b.resolve("initdb")))
                    .max(Comparator.comparingInt(b -> version(b.getParent().getFileName().toString()))).orElse(null);
        }
    }

    private static int version(String s) {
        try {
            return Integer.parseInt(s);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /**
     * A free port below the kernel's ephemeral range: the cluster comes back on the same port after the crash, and
     * a port in the ephemeral range may meanwhile be taken as the local end of an outgoing connection.
     */
    private static int freePort() throws IOException {
        Random rnd = new Random();
        for (int i = 0; i < 100; i++) {
            int port = 20_000 + rnd.nextInt(12_000);
            try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
                return port;
            } catch (IOException taken) {
                // try another
            }
        }
        throw new IOException("no free port in 20000..31999");
    }

    /** What the command printed, or "" when it failed. */
    private static String run(List<String> cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        return p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0 ? out : "";
    }
}
