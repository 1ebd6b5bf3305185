package io.gpupool.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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
 * Issue 5, must show 2: the faults a pool lives through, with a real server process and three real agent
 * processes (fake GPUs), each fault while jobs run:
 * <ol>
 *   <li>kill -9 of an agent, then a new agent process on its work directory: its jobs ran on, are re-adopted,
 *       finish as their first attempt;</li>
 *   <li>kill -9 of the server, then a new server process on the same store: it takes back the running jobs
 *       without relaunching them, the agents' buffered reports arrive;</li>
 *   <li>an agent cut off (a proxy holds its traffic) for longer than the node-lost timeout, then back: it
 *       stops its jobs before the server gives them away (fencing), the server declares the node lost and
 *       requeues its jobs (restart policy requeue) or fails them (fail), they run again elsewhere, and the
 *       agent's late reports change nothing.</li>
 * </ol>
 * Throughout: no job lost (each ends as its policy says), none run twice (each attempt launched once, counted
 * from the processes' own launch records and from the job directories; the attempts of a job never overlap).
 */
class AgentFaultTest {
    private static final String ADMIN = "fault-admin-token-0123456789";
    private static final long REPORT_MS = 250;
    private static final long LOST_MS = 8_000;
    private static final long KILL_GRACE_MS = 500;
    private static final ObjectMapper JSON = new ObjectMapper();
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(2)).build();
    private final List<Process> processes = new ArrayList<>();

    @TempDir Path dir;
    private int port;
    private String base;
    private String team;
    private String join;
    private Path launches;

    @AfterEach
    void stopProcesses() throws Exception {
        for (Process p : processes) p.destroyForcibly();
        for (Process p : processes) p.waitFor(10, TimeUnit.SECONDS);
        // the jobs of killed agents run in their own sessions: end them too
        for (String node : List.of("f-a100", "f-l40s-1", "f-l40s-2")) {
            Path jobs = dir.resolve(node).resolve("jobs");
            if (!Files.isDirectory(jobs)) continue;
            try (Stream<Path> d = Files.list(jobs)) {
                for (Path p : d.toList()) {
                    try {
                        long pid = Long.parseLong(Files.readString(p.resolve("pid")).trim());
                        ProcessHandle.of(pid).ifPresent(h -> {
                            h.descendants().forEach(ProcessHandle::destroyForcibly);
                            h.destroyForcibly();
                        });
                    } catch (NoSuchFileException | NumberFormatException e) {
                        // never started
                    }
                }
            }
        }
    }

    @Test
    void agent_kill_9_server_restart_and_a_cut_off_agent_lose_no_job_and_run_none_twice() throws Exception {
        launches = dir.resolve("launches.txt");
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort();
        }
        base = "http://127.0.0.1:" + port;
        Process server = startServer("server-1.log");
        call("POST", "/api/v1/tenants", ADMIN, "{\"name\":\"ops\"}");
        team = call("POST", "/api/v1/tenants/ops/tokens", ADMIN, "{}").path("token").asText();
        join = call("POST", "/api/v1/agent-tokens", ADMIN, "{}").path("token").asText();
        call("PUT", "/api/v1/config", ADMIN, "{\"policy\":\"fcfs-backfill\"}");
        try (PausableProxy proxy = new PausableProxy(port)) {
            Process a100 = launchAgent("f-a100", "8xA100-80GB", base, "a100-1.log");
            launchAgent("f-l40s-1", "8xL40S", base, "l40s-1.log");
            launchAgent("f-l40s-2", "8xL40S", "http://127.0.0.1:" + proxy.port(), "l40s-2.log");
            waitFor(Duration.ofSeconds(90), "three nodes ready", () -> readyNodes().size() == 3);
            List<String> all = new ArrayList<>();

            // 1. kill -9 of an agent while its jobs run; a new agent process on the same work directory
            List<String> phase1 = submit(20, "A100-80GB", 4.0, 6.0, "requeue", 1);
            all.addAll(phase1);
            waitFor(Duration.ofSeconds(60), "jobs run on f-a100", () -> confirmedOn("f-a100", phase1) >= 4);
            a100.destroyForcibly();
            a100.waitFor(10, TimeUnit.SECONDS);
            Set<String> runningAtKill = runningOn("f-a100", phase1);
            startAgent("f-a100", "8xA100-80GB", base, "a100-2.log");
            waitForEnd(phase1);
            for (String id : phase1) {
                JsonNode j = job(id);
                assertThat(j.path("state").asText()).as(id).isEqualTo("SUCCEEDED");
                assertThat(j.path("attempt").asInt()).as(id + " kept its first attempt").isEqualTo(1);
            }
            assertThat(runningAtKill).isNotEmpty();
            int watchedToTheEnd = 0;
            for (String id : runningAtKill) {
                // re-adopted and watched to its end ("exit code 0"), or ended while no agent ran ("... while the agent was down")
                String how = job(id).path("attempts").get(0).path("message").asText();
                assertThat(how).as(id).startsWith("exit code 0");
                if (how.equals("exit code 0")) watchedToTheEnd++;
            }
            assertThat(watchedToTheEnd).as("jobs re-adopted by the new agent process").isPositive();

            // 2. kill -9 of the server while jobs run everywhere; a new server process on the same store
            List<String> phase2 = submit(30, null, 2.0, 4.0, "requeue", 2);
            all.addAll(phase2);
            waitFor(Duration.ofSeconds(60), "jobs run", () -> confirmedOn(null, phase2) >= 8);
            server.destroyForcibly();
            server.waitFor(10, TimeUnit.SECONDS);
            Thread.sleep(1000); // the agents' reports fail meanwhile: their jobs end and are buffered
            startServer("server-2.log");
            waitForEnd(phase2);
            for (String id : phase2) {
                JsonNode j = job(id);
                assertThat(j.path("state").asText()).as(id).isEqualTo("SUCCEEDED");
                assertThat(j.path("attempt").asInt()).as(id + " was not relaunched after the restart").isEqualTo(1);
            }

            // 3. an agent cut off for longer than the node-lost timeout, then back
            // long enough that none ends before the cut-off agent stops it (LOST_MS - grace - interval after the cut)
            List<String> phase3 = new ArrayList<>(submit(10, "L40S", 11.0, 12.0, "requeue", 3));
            List<String> failing = submit(6, "L40S", 11.0, 12.0, "fail", 4);
            phase3.addAll(failing);
            all.addAll(phase3);
            waitFor(Duration.ofSeconds(60), "jobs run on f-l40s-2", () -> confirmedOn("f-l40s-2", phase3) >= 3);
            Set<String> runningAtCut = runningOn("f-l40s-2", phase3);
            long cutAt = System.currentTimeMillis();
            proxy.cut();
            waitFor(Duration.ofSeconds(30), "f-l40s-2 is lost", () -> lostNodes().contains("f-l40s-2"));
            assertThat(System.currentTimeMillis() - cutAt).isGreaterThanOrEqualTo(LOST_MS - 500);
            Thread.sleep(1500);
            proxy.restore();
            waitFor(Duration.ofSeconds(60), "f-l40s-2 is back", () -> readyNodes().contains("f-l40s-2"));
            waitForEnd(phase3);
            // every job whose first attempt was placed on the cut-off node: started there (then fenced) or not yet
            Set<String> cutOff = new HashSet<>();
            for (String id : phase3) if (job(id).path("attempts").get(0).path("node").asText().equals("f-l40s-2")) cutOff.add(id);
            assertThat(cutOff).containsAll(runningAtCut);
            waitFor(Duration.ofSeconds(30), "the cut-off agent's reports arrive", () -> runningAtCut.stream().allMatch(id ->
                    job(id).path("attempts").get(0).path("state").asText().equals("STOPPED")));
            for (String id : cutOff) {
                JsonNode j = job(id);
                JsonNode first = j.path("attempts").get(0);
                if (!first.path("startedMs").isNull()) {
                    assertThat(first.path("state").asText()).as(id).isEqualTo("STOPPED");
                    assertThat(first.path("message").asText()).as(id).startsWith("fenced");
                }
                if (failing.contains(id)) {
                    assertThat(j.path("state").asText()).as(id).isEqualTo("FAILED");
                    assertThat(j.path("message").asText()).contains("f-l40s-2 lost", "restart policy fail");
                } else {
                    assertThat(j.path("state").asText()).as(id).isEqualTo("SUCCEEDED");
                    assertThat(j.path("attempt").asInt()).as(id + " ran again as a new attempt").isEqualTo(2);
                }
            }
            for (String id : phase3) {
                if (cutOff.contains(id)) continue;
                assertThat(job(id).path("state").asText()).as(id).isEqualTo("SUCCEEDED");
                assertThat(job(id).path("attempt").asInt()).as(id).isEqualTo(1);
            }

            // no job lost, none run twice
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
                        // placed, but its node was lost before its agent started it
                        assertThat(a.path("state").asText()).as(key).isEqualTo("LOST");
                        assertThat(launched.getOrDefault(key, 0)).as(key + " never launched").isZero();
                    } else {
                        assertThat(launched.getOrDefault(key, 0)).as(key + " launched once").isEqualTo(1);
                        assertThat(a.path("startedMs").asLong()).as(key + " started after the attempt before it ended").isGreaterThan(lastEnd);
                    }
                    lastEnd = a.path("endedMs").asLong();
                }
            }
            assertThat(attempts).containsAll(launched.keySet());
            int dirs = 0;
            for (String node : List.of("f-a100", "f-l40s-1", "f-l40s-2")) {
                try (Stream<Path> d = Files.list(dir.resolve(node).resolve("jobs"))) {
                    dirs += (int) d.count();
                }
            }
            assertThat(dirs).as("one job directory per attempt launched").isEqualTo(launched.size());
        }
    }

    // ---- processes ----------------------------------------------------------------------------------

    private Process startServer(String log) throws Exception {
        Process p = java(log, ServerProcessMain.class.getName(), dir.resolve("data").toString(), ADMIN, "-", String.valueOf(port),
                String.valueOf(REPORT_MS), String.valueOf(LOST_MS));
        waitFor(Duration.ofSeconds(60), "the server listens (" + log + ")", () -> {
            try {
                return Files.readString(dir.resolve(log)).contains("listening on");
            } catch (IOException e) {
                return false;
            }
        });
        return p;
    }

    private Process launchAgent(String node, String gpus, String server, String log) throws Exception {
        return java(log, AgentProcessMain.class.getName(), server, join, node, dir.resolve(node).toString(), gpus, String.valueOf(KILL_GRACE_MS));
    }

    private Process startAgent(String node, String gpus, String server, String log) throws Exception {
        Process p = launchAgent(node, gpus, server, log);
        waitFor(Duration.ofSeconds(60), "agent " + node + " starts (" + log + ")", () -> {
            try {
                return Files.readString(dir.resolve(log)).contains("started with");
            } catch (IOException e) {
                return false;
            }
        });
        return p;
    }

    private Process java(String log, String main, String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"), main));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(dir.resolve(log).toFile()).start();
        processes.add(p);
        return p;
    }

    // ---- jobs ---------------------------------------------------------------------------------------

    /** Jobs that record their launch (job, attempt, node), then sleep a while. */
    private List<String> submit(int n, String model, double minSec, double maxSec, String restartPolicy, int phase) throws Exception {
        Random rnd = new Random(phase);
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Map<String, Object> job = new LinkedHashMap<>();
            job.put("name", "fault-" + phase + "-" + i);
            job.put("numGpus", 1);
            if (i % 3 == 2) job.put("gpuMilli", 500);
            if (model != null) job.put("gpuTypes", List.of(model));
            job.put("restartPolicy", restartPolicy);
            String sleep = String.format(Locale.ROOT, "%.2f", minSec + rnd.nextDouble() * (maxSec - minSec));
            job.put("command", List.of("sh", "-c", "echo \"launch $GPUPOOL_JOB_ID $GPUPOOL_ATTEMPT $(date +%s%3N)\" >> '" + launches + "'; sleep " + sleep));
            ids.add(call("POST", "/api/v1/jobs", team, JSON.writeValueAsString(job)).path("id").asText());
        }
        return ids;
    }

    private JsonNode job(String id) {
        return call("GET", "/api/v1/jobs/" + id, team, null);
    }

    /** Jobs whose current attempt its agent has reported started on the node (any node when null). */
    private long confirmedOn(String node, List<String> ids) {
        return runningOn(node, ids).size();
    }

    private Set<String> runningOn(String node, List<String> ids) {
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

    private void waitForEnd(List<String> ids) throws InterruptedException {
        waitFor(Duration.ofSeconds(120), "the jobs end", () -> ids.stream().allMatch(id -> {
            String st = job(id).path("state").asText();
            return st.equals("SUCCEEDED") || st.equals("FAILED") || st.equals("CANCELLED");
        }));
    }

    private Set<String> readyNodes() {
        return nodesIn("ready");
    }

    private Set<String> lostNodes() {
        return nodesIn("lost");
    }

    private Set<String> nodesIn(String state) {
        Set<String> out = new HashSet<>();
        for (JsonNode n : call("GET", "/api/v1/nodes", ADMIN, null).path("nodes")) {
            if (n.path("state").asText().equals(state)) out.add(n.path("name").asText());
        }
        return out;
    }

    /** One API call; while the server restarts, tried again until it answers. */
    private JsonNode call(String method, String path, String token, String body) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try {
                HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(20))
                        .header("Authorization", "Bearer " + token);
                if (body != null) b.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(body));
                else b.method(method, HttpRequest.BodyPublishers.noBody());
                HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() >= 500) throw new IOException("HTTP " + r.statusCode());
                if (r.statusCode() >= 400) throw new AssertionError(method + " " + path + " -> " + r.statusCode() + " " + r.body());
                return JSON.readTree(r.body());
            } catch (IOException e) {
                if (System.nanoTime() > deadline) throw new AssertionError(method + " " + path + ": " + e, e);
                try {
                    Thread.sleep(200);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new AssertionError(ie);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    private static void waitFor(Duration d, String what, BooleanSupplier c) {
        TestServer.eventually(d, what, c);
    }
}
