package io.gpupool.dist;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One machine standing in for a lab's head node and GPU servers, for running docs/install.md's commands on loopback:
 * {@code /opt}, {@code /etc}, {@code /var} and {@code /usr/local} are directories under {@link #root}, the server's
 * name is localhost and its port a free one ({@code lab.sed} rewrites the page's commands, the units and the
 * environment files alike), {@code sudo} runs the command as is ({@code sudo -u USER} with USER as PostgreSQL's user
 * name, libpq's default being the account's name), {@code useradd} and {@code chown} do nothing (one account),
 * {@code systemctl} is the stand-in of resources/io/gpupool/dist/systemctl. Each step runs in a bash of its own in
 * {@link #home} (where the bundles lie); the variables a step sets or exports reach the next ones. A second head node
 * (docs/install.md, section 11) is a second Lab on the same {@link Net}; the database machine's PostgreSQL is
 * {@link LabPostgres}, reached as {@code db.example.com:5432} and, through its socket, as libpq's default server.
 */
final class Lab implements AutoCloseable {
    /** What the agent gets beyond its unit's command: this machine has no GPUs, and the test leaves cgroups alone. */
    static final String AGENT_ARGS = "--fake-gpus 2xA100-80GB --no-confine";

    /**
     * What the server gets beyond its unit's command: a lease of 120 s instead of 30. On a loaded test machine (two
     * cores shared with other builds) a server restart took up to 47 s, past the default lease, and the agent rightly
     * stopped its jobs (docs/install.md, section 8, says to keep a restart shorter than the lease).
     */
    static final String SERVER_ARGS = "--node-lost-timeout 120";

    /** The page's head nodes. */
    static final String HEAD = "gpupool.example.com", HEAD_2 = "gpupool-2.example.com";

    /** Where the page's machines lead on loopback: the head nodes' ports (HEAD's, HEAD_2's). */
    record Net(int port, int port2) {
        static Net fresh() {
            return new Net(freePort(), freePort());
        }
    }

    final Path root;
    final Path home;
    /** This machine's server port (the page's 8080). */
    final int port;
    private final Path state;

    /** What one step printed and how it ended. */
    record Result(int exitCode, String stdout, String stderr) {
        Result orFail(String what) {
            if (exitCode != 0) throw new AssertionError(what + " exited with " + exitCode + "\n--- stdout\n" + stdout + "--- stderr\n" + stderr);
            return this;
        }
    }

    Lab(Path root) throws IOException {
        this(root, Net.fresh(), HEAD, null);
    }

    /** The machine {@code host} (HEAD or HEAD_2) of the lab {@code net}; {@code db}: the database machine's PostgreSQL, or null. */
    Lab(Path root, Net net, String host, LabPostgres db) throws IOException {
        this.root = root;
        // a root agent runs jobs as another account (nobody), which must reach their directories: the lab and its
        // parent (JUnit makes temporary directories 0700) open to all for reading and entering
        for (Path d : List.of(root.getParent(), root)) Files.setPosixFilePermissions(d, PosixFilePermissions.fromString("rwxr-xr-x"));
        this.home = Files.createDirectories(root.resolve("home"));
        // what a Linux server has before the page's commands
        for (String d : List.of("opt", "etc/systemd/system", "var/lib", "var/backups", "usr/local/bin")) Files.createDirectories(root.resolve(d));
        this.port = host.equals(HEAD) ? net.port() : net.port2();
        this.state = root.resolve("state.sh");
        List<String> sed = new ArrayList<>(List.of(
                // a path that starts a word (not inside $LAB itself, so rewriting twice changes nothing); twice for adjacent paths
                "s#(^|[^A-Za-z0-9_./-])/(opt|etc|var|usr/local)([/ \"':]|$)#\\1" + root + "/\\2\\3#g",
                "s#(^|[^A-Za-z0-9_./-])/(opt|etc|var|usr/local)([/ \"':]|$)#\\1" + root + "/\\2\\3#g",
                // each head node's URL leads to its port; a port alone (--port 8080) is this machine's
                "s#gpupool-2\\.example\\.com:8080#localhost:" + net.port2() + "#g",
                "s#gpupool\\.example\\.com:8080#localhost:" + net.port() + "#g",
                "s#gpupool(-2)?\\.example\\.com#localhost#g",
                "s#(^|[^0-9])8080([^0-9]|$)#\\1" + port + "\\2#g"));
        if (db != null) sed.addAll(List.of("s#db\\.example\\.com#127.0.0.1#g", "s#(^|[^0-9])5432([^0-9]|$)#\\1" + db.port + "\\2#g"));
        Files.writeString(root.resolve("lab.sed"), String.join("\n", sed) + "\n");
        Path systemctl = root.resolve("systemctl");
        try (InputStream in = Lab.class.getResourceAsStream("systemctl")) {
            Files.copy(in, systemctl);
        }
        Files.setPosixFilePermissions(systemctl, PosixFilePermissions.fromString("rwxr-xr-x"));
        String javaHome = System.getProperty("java.home");
        Files.writeString(state, String.join("\n",
                "export LAB='" + root + "' LAB_AGENT_ARGS='" + AGENT_ARGS + "' LAB_SERVER_ARGS='" + SERVER_ARGS + "'",
                "export PATH='" + root + "/usr/local/bin':\"$PATH\"",
                // as on a machine whose default java is older: bin/gpupool finds JDK 25 by itself where it is installed as
                // usual, else (a JDK elsewhere, e.g. CI's) it is given as JAVA_HOME
                javaHome.startsWith("/usr/lib/jvm/") ? "unset JAVA_HOME" : "export JAVA_HOME='" + javaHome + "'",
                // the database machine's client tools and libpq's default server (a distribution's is its socket directory)
                db == null ? "" : "export PATH='" + db.bin + "':\"$PATH\" PGHOST='" + db.socketDir() + "' PGPORT=" + db.port,
                "") );
    }

    /** Runs a step of the page (or the test's own commands) after rewriting it into the lab. */
    Result run(String name, String script) throws IOException, InterruptedException {
        String rewritten = sh(List.of("sed", "-E", "-f", root.resolve("lab.sed").toString()), script).orFail("rewriting " + name).stdout();
        String prelude = String.join("\n",
                "set -euo pipefail",
                ". '" + state + "'",
                "sudo() { if [ \"${1:-}\" = -u ]; then local u=\"$2\"; shift 2; PGUSER=\"$u\" \"$@\"; else \"$@\"; fi; }",
                "useradd() { :; }",
                "chown() { [ -e \"${!#}\" ]; }",
                "systemctl() { \"$LAB/systemctl\" \"$@\"; }",
                // at the end, the state for the next step: the environment and the variables this step made, appended to what
                // came before where they differ from what the last run appended (most runs, the test's polls, change nothing)
                "__lab_before=\"$(compgen -v | sort)\"",
                "trap '__lab_rc=$?; set +e; { declare -px | grep -Ev \"^declare -[a-zA-Z]*r\"; "
                        // (grep finding nothing, where the step made no variable, is no failure)
                        + "comm -13 <(echo \"$__lab_before\") <(compgen -v | sort) | { grep -vx -e __lab_before -e __lab_rc || true; } | while read -r v; do declare -p \"$v\"; done; "
                        + "} > \"" + state + ".new\" && if ! cmp -s \"" + state + ".new\" \"" + state + ".last\"; then "
                        + "cat \"" + state + ".new\" >> \"" + state + "\" && mv \"" + state + ".new\" \"" + state + ".last\"; fi; exit $__lab_rc' EXIT",
                "");
        long t0 = System.nanoTime();
        Result r = sh(List.of("bash", "-c", prelude + rewritten), null);
        if (name.startsWith("step ")) System.err.printf("lab: %s: %.1f s%n", name, (System.nanoTime() - t0) / 1e9);
        return r;
    }

    private Result sh(List<String> command, String stdin) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(command).directory(home.toFile());
        Path out = Files.createTempFile(root, "out", ".txt"), err = Files.createTempFile(root, "err", ".txt");
        pb.redirectOutput(out.toFile()).redirectError(err.toFile());
        Process p = pb.start();
        try (var in = p.getOutputStream()) {
            if (stdin != null) in.write(stdin.getBytes(StandardCharsets.UTF_8));
        }
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(command + " still running after 120 s; stdout:\n" + Files.readString(out) + "\nstderr:\n" + Files.readString(err));
        }
        return new Result(p.exitValue(), Files.readString(out), Files.readString(err));
    }

    String journal(String unit) throws IOException {
        Path log = root.resolve("journal").resolve(unit + ".log");
        return Files.exists(log) ? Files.readString(log) : "";
    }

    /** Stops the services and the agent's fence keeper (which a stopped agent leaves running, by design). */
    @Override
    public void close() throws IOException, InterruptedException {
        List<String> left = new ArrayList<>();
        for (String unit : List.of("gpupool-agent", "gpupool-server")) {
            Result r = run("stop " + unit, "systemctl stop " + unit + "\n");
            if (r.exitCode() != 0) left.add(unit + ": exit " + r.exitCode() + " " + r.stdout() + r.stderr());
        }
        Path keeper = root.resolve("var/lib/gpupool-agent/keeper.pid");
        if (Files.exists(keeper)) {
            String pid = Files.readString(keeper).trim();
            if (pid.matches("\\d+")) ProcessHandle.of(Long.parseLong(pid)).ifPresent(ProcessHandle::destroy);
        }
        if (!left.isEmpty()) throw new IllegalStateException("could not stop " + left);
    }

    /** The URL of this machine's server, as the page's commands reach it. */
    String url() {
        return "https://localhost:" + port;
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
