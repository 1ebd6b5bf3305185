package io.gpupool.server;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpupool.agent.AgentLauncher;
import io.gpupool.agent.node.NodeAgent;
import io.gpupool.server.core.AgentSettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import static io.gpupool.server.TestServer.ADMIN;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * Issue 20, must show 1: a service with two real node agents on fake GPUs runs jobs of two tenants (whole GPUs,
 * gangs, fractional shares, a failing one). The usage report's allocated GPU-seconds and GPU-memory-hours equal,
 * per tenant and in total, the sum over the jobs of their recorded grants (the attempts' rows, a separate record)
 * times the time they held them, to the millisecond; by day and by node add up to the same; and after a restart the
 * report over the same window is the same, number for number.
 */
class UsageOfAgentRunTest {
    private static final int JOBS = 24;
    @TempDir Path dir;

    private static ServerOptions options(Path data) {
        return TestServer.options(data).withCluster(null).withPolicy("fcfs-backfill").withAgents(new AgentSettings(200, 10_000));
    }

    @Test
    void allocated_usage_is_the_sum_of_grants_times_held_time_per_tenant_and_survives_a_restart() throws Exception {
        Path data = dir.resolve("server");
        List<NodeAgent> agents = new ArrayList<>();
        List<String> ids = new ArrayList<>();
        Map<String, String> tokens = new LinkedHashMap<>();
        String window;
        JsonNode before;
        Map<String, double[]> expected = new TreeMap<>(); // tenant -> {GPU-seconds, MiB-seconds}
        Map<String, Integer> ended = new TreeMap<>();
        try (TestServer s = TestServer.start(options(data))) {
            String join = s.post("/api/v1/agent-tokens", ADMIN, Map.of("label", "usage")).text("token");
            agents.add(AgentLauncher.start(AgentLauncher.Options.fake(s.base, join, "use-a100", dir.resolve("use-a100"), "4xA100-80GB")));
            agents.add(AgentLauncher.start(AgentLauncher.Options.fake(s.base, join, "use-l40s", dir.resolve("use-l40s"), "4xL40S")));
            TestServer.eventually("two nodes ready", () -> s.get("/api/v1/nodes", ADMIN).body().path("nodes").findValuesAsText("state")
                    .stream().filter("ready"::equals).count() == 2);
            tokens.put("alpha", s.tenantWithToken("alpha", 1));
            tokens.put("beta", s.tenantWithToken("beta", 1));
            for (int i = 0; i < JOBS; i++) {
                String tenant = i % 3 == 0 ? "beta" : "alpha";
                Map<String, Object> job = new LinkedHashMap<>();
                job.put("user", i % 2 == 0 ? "ann" : "bob");
                switch (i % 6) {
                    case 0, 1 -> job.put("numGpus", 1);
                    case 2 -> job.put("numGpus", 2);
                    case 3 -> job.put("numGpus", 4);
                    default -> {
                        job.put("numGpus", 1);
                        job.put("gpuMilli", 250 * (1 + i % 3));
                        job.put("gpuMemMib", 8_000);
                    }
                }
                String body = String.format(Locale.ROOT, "sleep %.2f", 0.1 + (i % 5) * 0.07) + (i == 7 ? "; exit 3" : "");
                job.put("command", List.of("sh", "-c", body));
                TestServer.Reply r = s.post("/api/v1/jobs", tokens.get(tenant), job);
                assertThat(r.status()).as(r.body().toString()).isEqualTo(201);
                ids.add(r.text("id"));
            }
            TestServer.eventually(Duration.ofSeconds(90), "all jobs end", () -> ids.stream()
                    .allMatch(id -> !List.of("PENDING", "RUNNING").contains(s.get("/api/v1/jobs/" + id, ADMIN).text("state"))));

            long from = Long.MAX_VALUE;
            long to = 0;
            for (String id : ids) {
                JsonNode job = s.get("/api/v1/jobs/" + id, ADMIN).body();
                assertThat(job.path("attempt").asInt()).as(id + " ran once").isEqualTo(1);
                assertThat(job.path("preemptions").asInt()).isZero();
                long held = job.path("endedMs").asLong() - job.path("startedMs").asLong();
                double[] sums = expected.computeIfAbsent(job.path("tenant").asText(), k -> new double[2]);
                for (JsonNode attempt : job.path("attempts")) {
                    for (JsonNode g : attempt.path("grants")) {
                        sums[0] += g.path("milli").asInt() / 1000.0 * held / 1000.0;
                        sums[1] += g.path("memoryMib").asLong() * (double) held / 1000.0;
                    }
                }
                ended.merge(job.path("state").asText(), 1, Integer::sum);
                from = Math.min(from, job.path("submittedMs").asLong());
                to = Math.max(to, job.path("endedMs").asLong());
            }
            assertThat(ended).containsEntry("FAILED", 1).containsEntry("SUCCEEDED", JOBS - 1);
            window = "since=" + (from - 1000) + "&until=" + (to + 1000);
            before = s.get("/api/v1/usage?" + window, ADMIN).body();
            assertThat(before.path("groups").findValuesAsText("key")).containsExactly("alpha", "beta");
            double total = 0;
            for (JsonNode g : before.path("groups")) {
                double[] sums = expected.get(g.path("key").asText());
                assertThat(g.path("gpuSecondsAllocated").asDouble()).as(g.path("key").asText()).isCloseTo(sums[0], within(1e-6));
                assertThat(g.path("gpuMemoryGibHours").asDouble()).isCloseTo(sums[1] / 1024 / 3600, within(1e-9));
                // the fake GPUs report utilization and power for every second a job runs on them
                assertThat(g.path("gpuSecondsUsed").asDouble()).isPositive().isLessThanOrEqualTo(g.path("gpuSecondsAllocated").asDouble() + 1e-9);
                assertThat(g.path("energyJoules").asDouble()).isPositive();
                total += sums[0];
            }
            assertThat(before.path("total").path("gpuSecondsAllocated").asDouble()).isCloseTo(total, within(1e-6));
            assertThat(before.path("total").path("jobs").path("SUCCEEDED").asInt()).isEqualTo(JOBS - 1);
            assertThat(before.path("total").path("waitSeconds").path("count").asInt()).isEqualTo(JOBS);
            for (String by : List.of("day", "hour", "node", "user", "model")) {
                JsonNode other = s.get("/api/v1/usage?" + window + "&by=" + by, ADMIN).body();
                double sum = 0;
                for (JsonNode g : other.path("groups")) sum += g.path("gpuSecondsAllocated").asDouble();
                assertThat(sum).as("by " + by).isCloseTo(total, within(1e-6));
            }
            JsonNode betaOnly = s.get("/api/v1/usage?" + window, tokens.get("beta")).body();
            assertThat(betaOnly.path("total").path("gpuSecondsAllocated").asDouble()).isCloseTo(expected.get("beta")[0], within(1e-6));
        } finally {
            for (NodeAgent a : agents) a.closeAndStopJobs("test over", Duration.ofSeconds(5));
        }
        try (TestServer s = TestServer.start(options(data))) {
            JsonNode after = s.get("/api/v1/usage?" + window, ADMIN).body();
            assertThat(after.path("groups")).isEqualTo(before.path("groups"));
            assertThat(after.path("total")).isEqualTo(before.path("total"));
        }
    }
}
