package io.gpupool.dist;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A PostgreSQL cluster of the lab's own, standing in for the distribution's on the database machine of docs/install.md:
 * superuser {@code postgres}, reached through its socket without a password (as {@code sudo -u postgres psql} reaches a
 * distribution's by peer authentication), and on 127.0.0.1 with a password (scram-sha-256), as the server connects.
 * The cluster runs as the {@code postgres} account where the test runs as root (initdb refuses root; the account is
 * made where it is missing, as .ci/services.sh does), else as the test's own account.
 */
final class LabPostgres implements AutoCloseable {
    final Path bin;
    final Path dir;
    final int port;
    private final boolean asPostgres;

    /** The newest PostgreSQL's bin directory (Debian's layout, /usr/lib/postgresql/N/bin), or null where there is none. */
    static Path binaries() throws IOException {
        Path base = Path.of("/usr/lib/postgresql");
        if (!Files.isDirectory(base)) return null;
        try (Stream<Path> versions = Files.list(base)) {
            return versions.map(v -> v.resolve("bin")).filter(b -> Files.isExecutable(b.resolve("initdb")) && Files.isExecutable(b.resolve("psql")))
                    .max(Comparator.comparing(b -> versionOf(b.getParent().getFileName().toString()))).orElse(null);
        }
    }

    private static int versionOf(String name) {
        return name.matches("\\d+") ? Integer.parseInt(name) : -1;
    }

    /** initdb and start in {@code dir} (made here), on a free loopback port. */
    LabPostgres(Path bin, Path dir) throws IOException, InterruptedException {
        this.bin = bin;
        // the cluster's account enters the test's temporary directory (JUnit makes it 0700)
        Files.setPosixFilePermissions(dir.getParent(), PosixFilePermissions.fromString("rwxr-xr-x"));
        this.dir = Files.createDirectories(dir);
        this.asPostgres = "root".equals(System.getProperty("user.name"));
        if (asPostgres) {
            if (run(List.of("id", "postgres"), false) != 0) run(List.of("useradd", "--system", "--no-create-home", "postgres"), true);
            run(List.of("chown", "postgres", dir.toString()), true);
        }
        this.port = freePort();
        pg(List.of(bin.resolve("initdb").toString(), "-D", dir.resolve("data").toString(), "-U", "postgres", "-E", "UTF8", "--locale=C",
                "--auth-local=trust", "--auth-host=scram-sha-256", "--no-sync"));
        pg(List.of(bin.resolve("pg_ctl").toString(), "-D", dir.resolve("data").toString(), "-l", dir.resolve("server.log").toString(), "-w",
                "-o", "-p " + port + " -k " + dir + " -c listen_addresses=127.0.0.1", "start"));
    }

    /** The socket directory: PGHOST for the lab's commands, as the distribution's /var/run/postgresql is libpq's default. */
    Path socketDir() {
        return dir;
    }

    String log() throws IOException {
        Path log = dir.resolve("server.log");
        return Files.exists(log) ? Files.readString(log) : "";
    }

    @Override
    public void close() throws IOException, InterruptedException {
        pg(List.of(bin.resolve("pg_ctl").toString(), "-D", dir.resolve("data").toString(), "-m", "fast", "-w", "stop"));
    }

    private void pg(List<String> command) throws IOException, InterruptedException {
        List<String> c = new ArrayList<>();
        if (asPostgres) c.addAll(List.of("runuser", "-u", "postgres", "--"));
        c.addAll(command);
        run(c, true);
    }

    private int run(List<String> command, boolean mustSucceed) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException(String.join(" ", command) + " still running after 60 s: " + out);
        }
        if (mustSucceed && p.exitValue() != 0)
            throw new IllegalStateException(String.join(" ", command) + " exited with " + p.exitValue() + ": " + out + log());
        return p.exitValue();
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
