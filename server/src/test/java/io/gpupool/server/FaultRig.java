package io.gpupool.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the fault tests share: a real server process and real agent processes (fake GPUs), jobs that prove they
 * never run twice at once, and the end-of-test check of the invariants a user relies on.
 *
 * <p>Every job runs {@code job.sh}: it takes an exclusive {@code flock} on a file of its job before it records its
 * launch, and holds it while it runs (the lock belongs to the job's process, so it goes when the process dies, however
 * it dies). An attempt that finds the lock taken while another attempt of its job still runs records "twice" and
 * exits. That oracle needs no clock: it is the kernel's own view of which processes are alive.
 */
final class FaultRig implements AutoCloseable {
    static final String ADMIN = "fault-admin-token-0123456789";
    private static final ObjectMapper JSON = new ObjectMapper();

    final Path dir;
    final long reportMs;
    final long lostMs;
    final long killGraceMs;
    final long marginMs;
    final String host;
    final int port;
    final String base;
    /** The replicas the rig's calls go to, the one that answered last first (one server unless a test adds more). */
    final List<String> servers = new java.util.concurrent.CopyOnWriteArrayList<>();
    String team;
    String join;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(2)).build();
    private final List<Process> processes = new ArrayList<>();
    private final Set<String> nodes = new HashSet<>();
    private final Path launches;
    private final Path twice;
    private final Path jobScript;

    FaultRig(Path dir, String host, long reportMs, long lostMs, long killGraceMs, long marginMs) throws IOException {
        this.dir = dir;
        this.host = host;
        this.reportMs = reportMs;
        this.lostMs = lostMs;
        this.killGraceMs = killGraceMs;
        this.marginMs = marginMs;
        try (ServerSocket free = new ServerSocket(0)) {
            this.port = free.getLocalPort();
        }
        this.base = "http://" + host + ":" + port;
        servers.add(base);
        this.launches = dir.resolve("launches.txt");
        this.twice = dir.resolve("twice.txt");
        this.jobScript = dir.resolve("job.sh");
        Files.createDirectories(dir.resolve("locks"));
        Files.writeString(jobScript, """
                # $1: seconds to run, or gate-NAME: until the test opens that gate. Holds its job's lock while it runs; finds
                # it taken only if another attempt still runs.
                exec 9>"%1$s/locks/$GPUPOOL_JOB_ID"
                if ! flock -n 9; then echo "twice $GPUPOOL_JOB_ID $GPUPOOL_ATTEMPT $(date +%%s%%3N)" >> "%1$s/twice.txt"; exit 99; fi
                echo "launch $GPUPOOL_JOB_ID $GPUPOOL_ATTEMPT $(date +%%s%%3N)" >> "%1$s/launches.txt"
                case "$1" in gate-*) while [ ! -e "%1$s/$1" ]; do sleep 0.1; done; exit 0 ;; esac
                exec sleep "$1"
                """.formatted(dir));
    }

    /** How long after its last applied report a lost node's jobs are given up. */
    long giveUpMs() {
        return lostMs + killGraceMs + marginMs;
    }

    // ---- processes ----------------------------------------------------------------------------------

    Process startServer(String log) throws Exception {
        Process p = java(List.of(), log, ServerProcessMain.class.getName(), dir.resolve("data").toString(), ADMIN, "-", String.valueOf(port),
                String.valueOf(reportMs), String.valueOf(lostMs), String.valueOf(marginMs), host);
        waitFor(Duration.ofSeconds(60), "the server listens (" + log + ")", () -> logContains(log, "listening on"));
        return p;
    }

    /**
     * A server replica on PostgreSQL {@code db} (its own data directory), listening on {@code replicaPort}: active at once
     * when the lease is free, else a standby. Returns once it says which.
     */
    Process startReplica(String db, int replicaPort, long leaseTtlMs, String log) throws Exception {
        Process p = java(List.of(), log, ServerProcessMain.class.getName(), "--db=" + db, "--lease-ttl-ms=" + leaseTtlMs,
                dir.resolve("data-" + replicaPort).toString(), ADMIN, "-", String.valueOf(replicaPort), String.valueOf(reportMs),
                String.valueOf(lostMs), String.valueOf(marginMs), host);
        waitFor(Duration.ofSeconds(60), "the replica starts (" + log + ")", () -> logContains(log, "active replica:") || logContains(log, "gpupool server standby on"));
        return p;
    }

    static int freePort() throws IOException {
        try (ServerSocket free = new ServerSocket(0)) {
            return free.getLocalPort();
        }
    }

    /** Tenant "ops" with a member token, an agent join token, and the policy. */
    void setUp(String policy) {
        call("POST", "/api/v1/tenants", ADMIN, "{\"name\":\"ops\"}");
        team = call("POST", "/api/v1/tenants/ops/tokens", ADMIN, "{}").path("token").asText();
        join = call("POST", "/api/v1/agent-tokens", ADMIN, "{}").path("token").asText();
        call("PUT", "/api/v1/config", ADMIN, "{\"policy\":\"" + policy + "\"}");
    }

    /** Another tenant, with a member token. */
    String tenant(String name, double weight, double guaranteed, double limit) {
        call("POST", "/api/v1/tenants", ADMIN, "{\"name\":\"" + name + "\",\"weight\":" + weight + ",\"guaranteedGpus\":" + guaranteed
                + ",\"limitGpus\":" + limit + "}");
        return call("POST", "/api/v1/tenants/" + name + "/tokens", ADMIN, "{}").path("token").asText();
    }

    /** One job of any shape that runs {@code job.sh} for {@code seconds}; returns its id. */
    String submit(String token, Map<String, Object> shape, double seconds) throws Exception {
        Map<String, Object> job = new LinkedHashMap<>(shape);
        job.put("command", List.of("sh", jobScript.toString(), String.format(Locale.ROOT, "%.2f", seconds)));
        return call("POST", "/api/v1/jobs", token, JSON.writeValueAsString(job)).path("id").asText();
    }

    /** An agent process; {@code prefix} runs it elsewhere (e.g. {@code ip netns exec NS}). */
    Process launchAgent(List<String> prefix, String node, String gpus, String server, String log) throws Exception {
        nodes.add(node);
        return java(prefix, log, AgentProcessMain.class.getName(), server, join, node, dir.resolve(node).toString(), gpus, String.valueOf(killGraceMs));
    }

    Process startAgent(List<String> prefix, String node, String gpus, String server, String log) throws Exception {
        Process p = launchAgent(prefix, node, gpus, server, log);
        waitFor(Duration.ofSeconds(60), "agent " + node + " starts (" + log + ")", () -> logContains(log, "started with"));
        return p;
    }

    static void signal(Process p, String signal) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid())).inheritIO().start();
        assertThat(kill.waitFor()).as("kill -" + signal + " " + p.pid()).isZero();
    }

    boolean logContains(String log, String text) {
        try {
            return Files.readString(dir.resolve(log)).contains(text);
        } catch (IOException e) {
            return false;
        }
    }

    /** The JVM options of the processes started from now on: cheap to start (C1 only, a small heap) unless {@link #asShipped}. */
    private List<String> jvmOptions = List.of("-Xmx256m", "-XX:TieredStopAtLevel=1");

    /**
     * The processes started from now on run with the JVM options `gpupool server` and `gpupool agent` get from their
     * launcher (scripts/java-options.sh: both JIT tiers, short G1 pauses), for benches that time the product as shipped.
     */
    FaultRig asShipped() {
        jvmOptions = List.of("-Xmx1g", "--sun-misc-unsafe-memory-access=allow", "-XX:MaxGCPauseMillis=20");
        return this;
    }

    private Process java(List<String> prefix, String log, String main, String... args) throws IOException {
        List<String> cmd = new ArrayList<>(prefix);
        cmd.addAll(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "--enable-native-access=ALL-UNNAMED"));
        cmd.addAll(jvmOptions);
        // -Dgpupool.fault.log=info (or LOGGER=debug, e.g. io.gpupool.agent=debug): the processes' log level, to read a failed run's logs
        String level = System.getProperty("gpupool.fault.log");
        if (level != null && !level.isBlank()) {
            cmd.add(level.contains("=") ? "-Dorg.slf4j.simpleLogger.log." + level : "-Dorg.slf4j.simpleLogger.defaultLogLevel=" + level);
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), main));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(dir.resolve(log).toFile()).start();
        processes.add(p);
        return p;
    }

    /** Ends every process the test started, the jobs of killed agents (their own sessions) and the fence keepers. */
    @Override
    public void close() throws Exception {
        for (Process p : processes) {
            if (p.isAlive()) new ProcessBuilder("kill", "-CONT", Long.toString(p.pid())).start().waitFor(); // a paused process cannot die
            p.destroyForcibly();
        }
        for (Process p : processes) p.waitFor(10, TimeUnit.SECONDS);
        keepLogs();
        for (String node : nodes) {
            Path work = dir.resolve(node);
            killRecorded(work.resolve("keeper.pid"), work.toString());
            Path jobs = work.resolve("jobs");
            if (!Files.isDirectory(jobs)) continue;
            try (Stream<Path> d = Files.list(jobs)) {
                for (Path p : d.toList()) killRecorded(p.resolve("pid"), p.toString());
            }
        }
    }

    /**
     * With {@code -Dgpupool.fault.keep=DIR} (bench/fault-stress.sh sets it), the processes' logs and the oracle's files
     * are copied there before the test's directory goes: a run that failed under stress can then be read afterwards.
     */
    private void keepLogs() throws IOException {
        String keep = System.getProperty("gpupool.fault.keep");
        if (keep == null || keep.isBlank()) return;
        Path to = Files.createDirectories(Path.of(keep).resolve(dir.getFileName() + "-" + System.currentTimeMillis()));
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.filter(Files::isRegularFile).toList()) Files.copy(f, to.resolve(f.getFileName()));
        }
    }

    /**
     * Kills the process a pid file names, with its descendants, if it is still the one that wrote it: its command line
     * names {@code ownArgument} (the keeper's work directory, the wrapper's job directory). A pid recorded minutes ago
     * may belong to any process by now (a 30-minute soak recycles the pid space): without this check the clean-up
     * killed other tests' JVMs on the same machine.
     */
    private static void killRecorded(Path pidFile, String ownArgument) throws IOException {
        try {
            long pid = Long.parseLong(Files.readString(pidFile).trim());
            ProcessHandle.of(pid).filter(h -> commandLine(pid).contains(ownArgument)).ifPresent(h -> {
                h.descendants().forEach(ProcessHandle::destroyForcibly);
                h.destroyForcibly();
            });
        } catch (NoSuchFileException | NumberFormatException e) {
            // never started
        }
    }

    /** The process's arguments, from /proc (empty once it is gone). */
    private static List<String> commandLine(long pid) {
        try {
            return List.of(Files.readString(Path.of("/proc", Long.toString(pid), "cmdline")).split("\0"));
        } catch (IOException e) {
            return List.of();
        }
    }

    // ---- jobs ---------------------------------------------------------------------------------------

    /** {@code n} one-GPU jobs (every third a half GPU) that run {@code job.sh} for a while. */
    List<String> submit(int n, List<String> models, double minSec, double maxSec, String restartPolicy, int seed) throws Exception {
        return submit(n, models, minSec, maxSec, null, restartPolicy, seed);
    }

    /**
     * {@code n} such jobs that run until {@link #openGate} opens {@code gate}: whatever the machine's load, they still run
     * when the test's fault comes (a job of a fixed length may end first on a slow machine, and the test would see an
     * end it did not mean to test).
     */
    List<String> submitGated(int n, List<String> models, String restartPolicy, int seed, String gate) throws Exception {
        return submit(n, models, 0, 0, gate, restartPolicy, seed);
    }

    /** The JSON of a one-GPU job that runs the rig's job script until {@code gate} opens (its launch is recorded). */
    String gatedJob(String name, String gate) throws IOException {
        return JSON.writeValueAsString(Map.of("name", name, "numGpus", 1, "command", List.of("sh", jobScript.toString(), "gate-" + gate)));
    }

    /** Lets the jobs of {@code gate} end (with exit code 0); those not started yet end as soon as they start. */
    void openGate(String gate) throws IOException {
        Files.createFile(dir.resolve("gate-" + gate));
    }

    private List<String> submit(int n, List<String> models, double minSec, double maxSec, String gate, String restartPolicy, int seed)
            throws Exception {
        Random rnd = new Random(seed);
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Map<String, Object> job = new LinkedHashMap<>();
            job.put("name", "fault-" + seed + "-" + i);
            job.put("numGpus", 1);
            if (i % 3 == 2) job.put("gpuMilli", 500);
            if (!models.isEmpty()) job.put("gpuTypes", models);
            job.put("restartPolicy", restartPolicy);
            String seconds = gate != null ? "gate-" + gate : String.format(Locale.ROOT, "%.2f", minSec + rnd.nextDouble() * (maxSec - minSec));
            job.put("command", List.of("sh", jobScript.toString(), seconds));
            ids.add(call("POST", "/api/v1/jobs", team, JSON.writeValueAsString(job)).path("id").asText());
        }
        return ids;
    }

    JsonNode job(String id) {
        return call("GET", "/api/v1/jobs/" + id, ADMIN, null);
    }

    String state(String id) {
        return job(id).path("state").asText();
    }

    /** Jobs whose current attempt its agent has reported started on the node (any node when null). */
    Set<String> runningOn(String node, List<String> ids) {
        Set<String> out = new HashSet<>();
        for (String id : ids) {
            JsonNode j = job(id);
            for (JsonNode a : j.path("attempts")) {
                if (a.path("attempt").asInt() == j.path("attempt").asInt() && a.path("state").asText().equals("RUNNING")
                        && (node == null || a.path("node").asText().equals(node))) out.add(id);
            }
        }
        return out;
    }

    /** The directory the agent of {@code node} keeps for an attempt of the job: id, attempt and the job's submit instant. */
    Path attemptDir(String node, String id, int attempt) {
        return dir.resolve(node).resolve("jobs").resolve(id + "." + attempt + "@" + job(id).path("submittedMs").asLong());
    }

    /** The node the job's first attempt was placed on. */
    String firstNode(String id) {
        return job(id).path("attempts").get(0).path("node").asText();
    }

    void waitForEnd(List<String> ids) {
        waitForEnd(ids, Duration.ofSeconds(180));
    }

    /** Until every job has ended (each asked about until it has, so a long list costs less each time). */
    void waitForEnd(List<String> ids, Duration timeout) {
        Set<String> open = new HashSet<>(ids);
        waitFor(timeout, "the jobs end", () -> {
            open.removeIf(id -> Set.of("SUCCEEDED", "FAILED", "CANCELLED").contains(state(id)));
            return open.isEmpty();
        });
    }

    /** When (epoch ms) the job's event of this type happened first; -1 if never. */
    long eventAt(String id, String type) {
        for (JsonNode e : call("GET", "/api/v1/jobs/" + id + "/events", ADMIN, null).path("events")) {
            if (e.path("type").asText().equals(type)) return e.path("atMs").asLong();
        }
        return -1;
    }

    Set<String> nodesIn(String state) {
        Set<String> out = new HashSet<>();
        for (JsonNode n : call("GET", "/api/v1/nodes", ADMIN, null).path("nodes")) {
            if (n.path("state").asText().equals(state)) out.add(n.path("name").asText());
        }
        return out;
    }

    void cordon(String node, boolean on) {
        call("POST", "/api/v1/nodes/" + node + (on ? "/cordon" : "/uncordon"), ADMIN, "{}");
    }

    // ---- the invariants -----------------------------------------------------------------------------

    /**
     * No job lost (each ended as its restart policy says), none run twice at once (the lock oracle), no attempt
     * launched twice, one job directory per launch, and attempts of a job one after the other by the agents' clocks (an
     * end is dated by the exit code the job's wrapper wrote, also when an agent found it late).
     */
    void checkInvariants(List<String> all) throws IOException {
        assertThat(Files.exists(twice) ? Files.readAllLines(twice) : List.<String>of()).as("attempts that found another attempt of their job running").isEmpty();
        Map<String, Integer> launched = new HashMap<>();
        for (String line : Files.readAllLines(launches)) {
            String[] f = line.trim().split(" ");
            launched.merge(f[1] + "#" + f[2], 1, Integer::sum);
        }
        Set<String> attempts = new HashSet<>();
        for (String id : all) {
            JsonNode j = job(id);
            assertThat(j.path("state").asText()).as(id).isIn("SUCCEEDED", "FAILED");
            long lastEnd = -1;
            for (JsonNode a : j.path("attempts")) {
                String key = id + "#" + a.path("attempt").asInt();
                assertThat(attempts.add(key)).as(key + " placed once").isTrue();
                if (a.path("startedMs").isNull()) {
                    assertThat(launched.getOrDefault(key, 0)).as(key + " never launched").isZero();
                } else {
                    assertThat(launched.getOrDefault(key, 0)).as(key + " launched once").isEqualTo(1);
                    if (lastEnd >= 0) assertThat(a.path("startedMs").asLong()).as(key + " started after the attempt before it ended").isGreaterThan(lastEnd);
                }
                // an end without an exit code found by a restarted agent is dated when it was found, not when it happened
                boolean seenLate = a.path("exitCode").isNull() && a.path("message").asText().contains("while the agent was down");
                lastEnd = a.path("endedMs").isNull() || seenLate ? -1 : a.path("endedMs").asLong();
            }
        }
        assertThat(attempts).containsAll(launched.keySet());
        int dirs = 0;
        for (String node : nodes) {
            Path jobs = dir.resolve(node).resolve("jobs");
            if (!Files.isDirectory(jobs)) continue;
            try (Stream<Path> d = Files.list(jobs)) {
                dirs += (int) d.count();
            }
        }
        assertThat(dirs).as("one job directory per attempt launched").isEqualTo(launched.size());
    }

    /**
     * The oracle alone, for jobs that have not all ended: no attempt found another attempt of its job running, and no
     * attempt was launched twice.
     */
    void checkNeverTwice() throws IOException {
        assertThat(Files.exists(twice) ? Files.readAllLines(twice) : List.<String>of()).as("attempts that found another attempt of their job running").isEmpty();
        Map<String, Integer> launched = new HashMap<>();
        for (String line : Files.readAllLines(launches)) {
            String[] f = line.trim().split(" ");
            launched.merge(f[1] + "#" + f[2], 1, Integer::sum);
        }
        assertThat(launched).as("launches per attempt").allSatisfy((k, n) -> assertThat(n).as(k).isEqualTo(1));
    }

    // ---- the API ------------------------------------------------------------------------------------

    /**
     * One API call; while the server restarts (or, with several replicas, while another takes over), tried again until it
     * answers, moving to the next replica after a failure.
     */
    JsonNode call(String method, String path, String token, String body) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            String at = servers.getFirst();
            try {
                HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(at + path)).timeout(Duration.ofSeconds(20))
                        .header("Authorization", "Bearer " + token);
                if (body != null) b.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(body));
                else b.method(method, HttpRequest.BodyPublishers.noBody());
                HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() >= 500) throw new IOException("HTTP " + r.statusCode());
                if (r.statusCode() >= 400) throw new AssertionError(method + " " + path + " -> " + r.statusCode() + " " + r.body());
                return JSON.readTree(r.body());
            } catch (IOException e) {
                if (System.nanoTime() > deadline) throw new AssertionError(method + " " + path + ": " + e, e);
                if (servers.size() > 1 && servers.remove(at)) servers.add(at);   // the next replica first
                sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    static void waitFor(Duration d, String what, BooleanSupplier c) {
        TestServer.eventually(d, what, c);
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
