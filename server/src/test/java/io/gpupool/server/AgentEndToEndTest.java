package io.gpupool.server;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpupool.agent.AgentLauncher;
import io.gpupool.agent.node.NodeAgent;
import io.gpupool.agent.protocol.GpuInfo;
import io.gpupool.server.core.AgentSettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;

import static io.gpupool.server.TestServer.ADMIN;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 5, must show 1: a server and three real node agents on loopback (fake GPUs, 8 each, two models) run
 * 200 short real processes, plus a few that ignore SIGTERM and are cancelled while they run. Every process
 * prints its environment and its own start and end time; the test then checks against the grants the server
 * recorded for each attempt that
 * <ul>
 *   <li>CUDA_VISIBLE_DEVICES names exactly the granted GPUs, in grant order;</li>
 *   <li>fractional jobs got HAMi's limits for their grant (CUDA_DEVICE_MEMORY_LIMIT_0, CUDA_DEVICE_SM_LIMIT) and
 *       the memory fraction, and whole-GPU jobs none;</li>
 *   <li>no two processes holding a whole GPU ran on it at the same time (cancelled ones included: their
 *       GPUs are re-placed at once, the agent starts the next job only when the old process is gone), and
 *       the fractional ones on a GPU never held more than its compute and memory;</li>
 *   <li>every job ran exactly once: one attempt, one job directory per node of it, across all agents.</li>
 * </ul>
 */
class AgentEndToEndTest {
    private static final int JOBS = 200;
    private static final int STUBBORN = 6;

    @TempDir Path dir;

    /** One process's run as it reported it, on one node. */
    private record Run(String jobId, String node, List<Grant> grants, long startMs, long endMs, Map<String, String> env) {}

    private record Grant(String uuid, int milli, long memoryMib, boolean exclusive) {}

    @Test
    void three_agents_run_200_real_processes_each_on_exactly_its_granted_gpus() throws Exception {
        ServerOptions o = TestServer.options(dir.resolve("server")).withCluster(null).withPolicy("fcfs-backfill")
                .withAgents(new AgentSettings(200, 10_000));
        List<NodeAgent> agents = new ArrayList<>();
        try (TestServer s = TestServer.start(o)) {
            String join = s.post("/api/v1/agent-tokens", ADMIN, Map.of("label", "e2e")).text("token");
            Map<String, String> spec = new LinkedHashMap<>();
            spec.put("e2e-a100-1", "8xA100-80GB");
            spec.put("e2e-a100-2", "8xA100-80GB");
            spec.put("e2e-l40s-1", "8xL40S");
            for (var e : spec.entrySet()) {
                agents.add(AgentLauncher.start(AgentLauncher.Options.fake(s.base, join, e.getKey(), dir.resolve(e.getKey()), e.getValue())
                        .withKillGrace(Duration.ofMillis(800))));
            }
            Map<String, Long> memoryOf = new HashMap<>();
            for (NodeAgent a : agents) for (GpuInfo g : a.inventory().gpus()) memoryOf.put(g.uuid(), g.memoryTotalMib());
            TestServer.eventually("three nodes ready", () -> s.get("/api/v1/nodes", ADMIN).body().path("nodes").findValuesAsText("state")
                    .stream().filter("ready"::equals).count() == 3);

            String team = s.tenantWithToken("e2e", 1);
            Random rnd = new Random(5);
            List<String> ids = new ArrayList<>();
            for (int i = 0; i < JOBS; i++) ids.add(submit(s, team, i, rnd));
            List<String> stubborn = new ArrayList<>();
            for (int i = 0; i < STUBBORN; i++) {
                stubborn.add(s.post("/api/v1/jobs", team, Map.of("name", "stubborn-" + i, "numGpus", 1, "command",
                        List.of("sh", "-c", "trap '' TERM; " + script("sleep 30")))).text("id"));
            }
            // cancel the stubborn ones once their processes run (and ignore SIGTERM): their GPUs go to the next jobs at once
            for (String id : stubborn) {
                TestServer.eventually(Duration.ofSeconds(60), "stubborn " + id + " runs", () -> s.get("/api/v1/jobs/" + id + "/logs", team).body()
                        .path("text").asText().contains("start "));
                assertThat(s.delete("/api/v1/jobs/" + id, team).status()).isEqualTo(200);
            }
            TestServer.eventually(Duration.ofSeconds(150), "all jobs end", () -> s.get("/api/v1/pool", ADMIN).body().path("runningCount").asInt() == 0
                    && s.get("/api/v1/pool", ADMIN).body().path("pendingCount").asInt() == 0);
            TestServer.eventually(Duration.ofSeconds(30), "every attempt's end is reported", () -> Stream.concat(ids.stream(), stubborn.stream())
                    .allMatch(id -> s.get("/api/v1/jobs/" + id, team).body().path("attempts").findValuesAsText("state").stream()
                            .allMatch(st -> st.equals("SUCCEEDED") || st.equals("STOPPED"))));

            List<Run> runs = new ArrayList<>();
            int attemptNodes = 0;
            for (String id : ids) {
                JsonNode job = s.get("/api/v1/jobs/" + id, team).body();
                assertThat(job.path("state").asText()).as(id + ": " + job.path("message").asText()).isEqualTo("SUCCEEDED");
                assertThat(job.path("attempt").asInt()).as(id + " ran once").isEqualTo(1);
                for (JsonNode a : job.path("attempts")) {
                    assertThat(a.path("attempt").asInt()).isEqualTo(1);
                    attemptNodes++;
                    String node = a.path("node").asText();
                    TestServer.eventually(Duration.ofSeconds(20), id + " output complete on " + node, () -> output(s, team, id, node).path("complete").asBoolean());
                    runs.add(parse(id, node, a.path("grants"), output(s, team, id, node).path("text").asText()));
                }
            }
            for (String id : stubborn) {
                JsonNode job = s.get("/api/v1/jobs/" + id, team).body();
                assertThat(job.path("state").asText()).isEqualTo("CANCELLED");
                JsonNode a = job.path("attempts").get(0);
                assertThat(a.path("state").asText()).isEqualTo("STOPPED");
                assertThat(a.path("message").asText()).contains("SIGKILL");
                attemptNodes++;
                String node = a.path("node").asText();
                TestServer.eventually(Duration.ofSeconds(20), id + " output complete", () -> output(s, team, id, node).path("complete").asBoolean());
                Run r = parse(id, node, a.path("grants"), output(s, team, id, node).path("text").asText());
                // killed before printing its end: it ran until the agent saw it end
                runs.add(new Run(r.jobId(), r.node(), r.grants(), r.startMs(), a.path("endedMs").asLong(), r.env()));
            }

            for (Run r : runs) checkEnvironment(r, memoryOf);
            checkNoGpuOverCommitted(runs, memoryOf);
            // at most once: one job directory per attempt and node, on that node only
            int dirs = 0;
            for (var e : spec.keySet()) {
                try (Stream<Path> d = Files.list(dir.resolve(e).resolve("jobs"))) {
                    for (Path p : d.toList()) {
                        dirs++;
                        String jobId = p.getFileName().toString().replaceAll("\\.\\d+@\\d+$", ""); // id.attempt@submit-instant
                        assertThat(runs).as("job directory " + p).anyMatch(r -> r.jobId().equals(jobId) && r.node().equals(e));
                    }
                }
            }
            assertThat(dirs).isEqualTo(attemptNodes);
            assertThat(runs).hasSize(attemptNodes);
            s.server.pool().checkConsistency().join();
        } finally {
            for (NodeAgent a : agents) a.closeAndStopJobs("test over", Duration.ofSeconds(5));
        }
    }

    /** A mix: whole GPUs (1, 2, 4, 8), 16-GPU gangs over two nodes, fractional shares with and without memory. */
    private static String submit(TestServer s, String token, int i, Random rnd) {
        Map<String, Object> job = new LinkedHashMap<>();
        job.put("name", "e2e-" + i);
        String sleep = String.format(Locale.ROOT, "sleep %.2f", 0.05 + rnd.nextDouble() * 0.3);
        int kind = i % 20;
        if (kind < 6) {
            job.put("numGpus", 1);
        } else if (kind < 8) {
            job.put("numGpus", 2);
        } else if (kind == 8) {
            job.put("numGpus", 4);
            job.put("gpuTypes", List.of("A100-80GB"));
        } else if (kind == 9) {
            job.put("numGpus", i % 40 == 9 ? 16 : 8); // a 16-GPU gang: two replicas of 8, one per A100 node
            job.put("gpusPerReplica", 8);
            job.put("gpuTypes", List.of("A100-80GB"));
        } else if (kind < 16) {
            job.put("numGpus", 1);
            job.put("gpuMilli", List.of(100, 250, 300, 500).get(rnd.nextInt(4)));
            job.put("gpuMemMib", 1024L * (4 + rnd.nextInt(12)));
        } else if (kind < 18) {
            job.put("numGpus", 1);
            job.put("gpuMilli", 250);
            job.put("gpuTypes", List.of("L40S"));
        } else {
            job.put("numGpus", 1);
            job.put("gpuTypes", List.of("L40S"));
        }
        job.put("command", List.of("sh", "-c", script(sleep)));
        TestServer.Reply r = s.post("/api/v1/jobs", token, job);
        assertThat(r.status()).as(r.body().toString()).isEqualTo(201);
        return r.text("id");
    }

    /** Prints the start time, the GPU environment, runs {@code body}, prints the end time. */
    private static String script(String body) {
        return "echo \"start $(date +%s%3N)\"; for v in CUDA_VISIBLE_DEVICES CUDA_DEVICE_SM_LIMIT CUDA_DEVICE_MEMORY_LIMIT_0 "
                + "GPUPOOL_MEMORY_FRACTION GPUPOOL_ATTEMPT; do eval \"echo env $v=\\${$v-unset}\"; done; " + body + "; echo \"end $(date +%s%3N)\"";
    }

    private static JsonNode output(TestServer s, String token, String id, String node) {
        return s.get("/api/v1/jobs/" + id + "/logs?node=" + node, token).body();
    }

    private static Run parse(String id, String node, JsonNode grants, String text) {
        List<Grant> gs = new ArrayList<>();
        for (JsonNode g : grants) gs.add(new Grant(g.path("uuid").asText(), g.path("milli").asInt(), g.path("memoryMib").asLong(), g.path("exclusive").asBoolean()));
        long start = -1;
        long end = -1;
        Map<String, String> env = new HashMap<>();
        for (String line : text.split("\n")) {
            if (line.startsWith("start ")) start = Long.parseLong(line.substring(6).trim());
            else if (line.startsWith("end ")) end = Long.parseLong(line.substring(4).trim());
            else if (line.startsWith("env ")) {
                String kv = line.substring(4);
                env.put(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
            }
        }
        assertThat(start).as(id + " on " + node + " printed its start:\n" + text).isPositive();
        return new Run(id, node, gs, start, end, env);
    }

    private static void checkEnvironment(Run r, Map<String, Long> memoryOf) {
        String what = r.jobId() + " on " + r.node();
        assertThat(r.env().get("CUDA_VISIBLE_DEVICES")).as(what).isEqualTo(String.join(",", r.grants().stream().map(Grant::uuid).toList()));
        assertThat(r.env().get("GPUPOOL_ATTEMPT")).as(what).isEqualTo("1");
        Grant first = r.grants().getFirst();
        if (first.exclusive()) {
            assertThat(r.env().get("CUDA_DEVICE_SM_LIMIT")).as(what).isEqualTo("unset");
            assertThat(r.env().get("CUDA_DEVICE_MEMORY_LIMIT_0")).as(what).isEqualTo("unset");
        } else {
            assertThat(r.grants()).hasSize(1);
            assertThat(r.env().get("CUDA_DEVICE_SM_LIMIT")).as(what).isEqualTo(String.valueOf((first.milli() + 9) / 10));
            assertThat(r.env().get("CUDA_DEVICE_MEMORY_LIMIT_0")).as(what).isEqualTo(first.memoryMib() + "m");
            double fraction = Math.floor(first.memoryMib() / (double) memoryOf.get(first.uuid()) * 10_000) / 10_000;
            assertThat(r.env().get("GPUPOOL_MEMORY_FRACTION")).as(what).isEqualTo(String.format(Locale.ROOT, "%.4f", fraction));
        }
    }

    /** Sweeps each GPU's runs in time: a whole-GPU run overlaps nothing; shares stay within the GPU. */
    private static void checkNoGpuOverCommitted(List<Run> runs, Map<String, Long> memoryOf) {
        Map<String, List<Object[]>> byGpu = new HashMap<>();
        for (Run r : runs) {
            assertThat(r.endMs()).as(r.jobId() + " ended").isGreaterThanOrEqualTo(r.startMs());
            for (Grant g : r.grants()) byGpu.computeIfAbsent(g.uuid(), k -> new ArrayList<>()).add(new Object[] {r, g});
        }
        for (var e : byGpu.entrySet()) {
            List<Object[]> list = e.getValue();
            for (int i = 0; i < list.size(); i++) {
                Run a = (Run) list.get(i)[0];
                Grant ga = (Grant) list.get(i)[1];
                int milli = 0;
                long mem = 0;
                for (Object[] other : list) {
                    Run b = (Run) other[0];
                    Grant gb = (Grant) other[1];
                    // b runs at a's start instant
                    if (b.startMs() > a.startMs() || b.endMs() < a.startMs()) continue;
                    if (b != a && (ga.exclusive() || gb.exclusive())) {
                        throw new AssertionError("GPU " + e.getKey() + ": " + a.jobId() + " started at " + a.startMs() + " while "
                                + b.jobId() + " ran there (" + b.startMs() + ".." + b.endMs() + ")");
                    }
                    milli += gb.milli();
                    mem += gb.memoryMib();
                }
                assertThat(milli).as("compute on " + e.getKey() + " when " + a.jobId() + " started").isLessThanOrEqualTo(1000);
                if (!ga.exclusive()) assertThat(mem).as("memory on " + e.getKey()).isLessThanOrEqualTo(memoryOf.get(e.getKey()));
            }
        }
    }
}
