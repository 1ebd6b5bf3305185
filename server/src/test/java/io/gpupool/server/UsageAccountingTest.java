package io.gpupool.server;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpupool.agent.protocol.GpuSample;
import io.gpupool.agent.protocol.JobPhase;
import io.gpupool.agent.protocol.RunningJobInfo;
import io.gpupool.server.core.AgentSettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.gpupool.server.TestServer.ADMIN;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * Issue 20, must show 1 (part): usage accounting through the API, message by message with {@link TestNode}s whose
 * GPUs report exactly what the test says. Energy of a GPU at a constant power is that power times the time the job
 * held it, across a server restart; a member sees only its own tenant; the Prometheus counters agree with the report;
 * bad parameters are 400s naming them. The run on real fake-GPU agents is {@link UsageOfAgentRunTest}.
 */
class UsageAccountingTest {
    private static final double WATTS = 312.5;
    @TempDir Path dir;

    private static ServerOptions options(Path data) {
        // the node is never declared lost while the test restarts the server
        return TestServer.options(data).withCluster(null).withAgents(new AgentSettings(300, 60_000, 500));
    }

    /** One sample of GPU 0 of a one-A100 node at the test's constant power, busy. */
    private static GpuSample busy(TestNode n) {
        return new GpuSample(0, n.uuid(0), 100, 81_920L, 81_920L, 70, WATTS, List.of(), null);
    }

    private static JsonNode usage(TestServer s, String token, String query) {
        TestServer.Reply r = s.get("/api/v1/usage?" + query, token);
        assertThat(r.status()).as(r.body().toString()).isEqualTo(200);
        return r.body();
    }

    @Test
    void energy_at_a_constant_power_is_power_times_the_time_held_exactly_across_a_server_restart() throws Exception {
        String join;
        String member;
        String id;
        TestNode first;
        try (TestServer s = TestServer.start(options(dir))) {
            join = s.post("/api/v1/agent-tokens", ADMIN, Map.of()).text("token");
            member = s.tenantWithToken("watt", 1);
            first = new TestNode(s.base, join, "usage-a100", "1xA100-80GB");
            first.register();
            id = s.post("/api/v1/jobs", member, Map.of("numGpus", 1, "user", "ada", "command", List.of("true"))).text("id");
            first.launch(id);
            first.running = List.of(new RunningJobInfo(id, 1, 4242, System.currentTimeMillis(), false));
            first.report(List.of(first.status(id, 1, JobPhase.RUNNING, null)), List.of(), List.of(busy(first)), 0);
            for (int i = 0; i < 3; i++) first.report(List.of(), List.of(), List.of(busy(first)), 0);
        }
        try (TestServer s = TestServer.start(options(dir))) {
            TestNode back = new TestNode(s.base, join, "usage-a100", "1xA100-80GB");
            back.nextSeq = first.nextSeq;
            back.running = first.running;
            back.register();
            for (int i = 0; i < 3; i++) back.report(List.of(), List.of(), List.of(busy(back)), 0);
            back.running = List.of();
            back.report(List.of(back.status(id, 1, JobPhase.SUCCEEDED, 0)), List.of(), List.of(busy(back)), 0);
            TestServer.eventually("the job ends", () -> s.get("/api/v1/jobs/" + id, member).text("state").equals("SUCCEEDED"));

            JsonNode job = s.get("/api/v1/jobs/" + id, member).body();
            assertThat(job.path("preemptions").asInt()).isZero();
            long heldMs = job.path("endedMs").asLong() - job.path("startedMs").asLong();
            JsonNode total = usage(s, member, "since=" + (job.path("submittedMs").asLong() - 1) + "&until=" + (job.path("endedMs").asLong() + 1)).path("total");
            assertThat(total.path("gpuSecondsAllocated").asDouble()).isCloseTo(heldMs / 1000.0, within(1e-9));
            assertThat(total.path("energyJoules").asDouble()).isCloseTo(WATTS * heldMs / 1000.0, within(1e-6));
            assertThat(total.path("energyKwh").asDouble()).isCloseTo(WATTS * heldMs / 1000.0 / 3.6e6, within(1e-12));
            // alone on its GPU at 100% utilization: every held second is a used second
            assertThat(total.path("gpuSecondsUsed").asDouble()).isCloseTo(heldMs / 1000.0, within(1e-9));
            assertThat(total.path("gpuMemoryGibHours").asDouble()).isCloseTo(80.0 * heldMs / 3_600_000.0, within(1e-9));
            assertThat(total.path("jobs").path("SUCCEEDED").asLong()).isEqualTo(1);
            assertThat(total.path("waitSeconds").path("count").asInt()).isEqualTo(1);
            assertThat(total.path("waitSeconds").path("max").asDouble())
                    .isEqualTo((job.path("startedMs").asLong() - job.path("submittedMs").asLong()) / 1000.0);
            JsonNode byUser = usage(s, ADMIN, "since=1d&by=user").path("groups");
            assertThat(byUser.findValuesAsText("key")).containsExactly("ada");
            JsonNode byModel = usage(s, ADMIN, "since=1d&by=model").path("groups");
            assertThat(byModel.findValuesAsText("key")).containsExactly("A100-80GB");
        }
    }

    @Test
    void a_member_sees_only_its_own_tenant_and_the_metrics_counters_agree_with_the_report() throws Exception {
        try (TestServer s = TestServer.start(options(dir))) {
            String join = s.post("/api/v1/agent-tokens", ADMIN, Map.of()).text("token");
            String red = s.tenantWithToken("red", 1);
            String blue = s.tenantWithToken("blue", 1);
            TestNode n = new TestNode(s.base, join, "usage-two", "2xA100-80GB");
            n.register();
            String r = s.post("/api/v1/jobs", red, Map.of("numGpus", 1, "command", List.of("true"))).text("id");
            String b = s.post("/api/v1/jobs", blue, Map.of("numGpus", 1, "gpuMilli", 500, "gpuMemMib", 20_000, "command", List.of("true"))).text("id");
            n.launch(r);
            n.launch(b);
            // both GPUs report the same, so the figures do not depend on which GPU each job got
            List<GpuSample> both = List.of(new GpuSample(0, n.uuid(0), 40, 1L, 81_920L, 60, 150.0, List.of(), null),
                    new GpuSample(1, n.uuid(1), 40, 1L, 81_920L, 60, 150.0, List.of(), null));
            for (int i = 0; i < 3; i++) n.report(List.of(), List.of(), both, 0);
            n.report(List.of(n.status(r, 1, JobPhase.SUCCEEDED, 0), n.status(b, 1, JobPhase.FAILED, 2)), List.of(), both, 0);
            TestServer.eventually("both end", () -> s.get("/api/v1/pool", ADMIN).body().path("runningCount").asInt() == 0);

            JsonNode mine = usage(s, red, "since=1h");
            assertThat(mine.path("tenant").asText()).isEqualTo("red");
            assertThat(mine.path("groups").findValuesAsText("key")).containsExactly("red");
            assertThat(mine.path("total").path("jobs").path("SUCCEEDED").asLong()).isEqualTo(1);
            assertThat(mine.path("total").path("jobs").has("FAILED")).isFalse();
            TestServer.Reply other = s.get("/api/v1/usage?tenant=blue", red);
            assertThat(other.status()).isEqualTo(403);
            assertThat(other.body().path("error").asText()).isNotEmpty();
            assertThat(s.get("/api/v1/usage?tenant=red", red).status()).isEqualTo(200);

            JsonNode all = usage(s, ADMIN, "since=1h");
            assertThat(all.path("groups").findValuesAsText("key")).containsExactly("blue", "red");
            JsonNode blueFigures = all.path("groups").get(0);
            JsonNode blueJob = s.get("/api/v1/jobs/" + b, ADMIN).body();
            long blueMs = blueJob.path("endedMs").asLong() - blueJob.path("startedMs").asLong();
            assertThat(blueFigures.path("gpuSecondsAllocated").asDouble()).isCloseTo(0.5 * blueMs / 1000.0, within(1e-9));
            assertThat(blueFigures.path("jobs").path("FAILED").asLong()).isEqualTo(1);
            // alone on GPU 1 with half of it: all its energy, and its half of the utilization
            assertThat(blueFigures.path("energyJoules").asDouble()).isCloseTo(150.0 * blueMs / 1000.0, within(1e-6));
            assertThat(blueFigures.path("gpuSecondsUsed").asDouble()).isCloseTo(0.4 * 0.5 * blueMs / 1000.0, within(1e-9));
            assertThat(usage(s, ADMIN, "since=1h&tenant=blue").path("groups").findValuesAsText("key")).containsExactly("blue");

            String metrics = s.get("/metrics", null).raw().body();
            for (JsonNode g : all.path("groups")) {
                String t = g.path("key").asText();
                assertThat(counter(metrics, "gpupool_tenant_gpu_seconds_allocated_total", t)).as(t).isCloseTo(g.path("gpuSecondsAllocated").asDouble(), within(1e-6));
                assertThat(counter(metrics, "gpupool_tenant_gpu_seconds_used_total", t)).as(t).isCloseTo(g.path("gpuSecondsUsed").asDouble(), within(1e-6));
                assertThat(counter(metrics, "gpupool_tenant_energy_joules_total", t)).as(t).isCloseTo(g.path("energyJoules").asDouble(), within(1e-6));
            }
        }
    }

    @Test
    void bad_parameters_are_400_naming_the_parameter() {
        try (TestServer s = TestServer.start(options(dir))) {
            Map<String, String> bad = Map.of("by=week", "by", "since=yesterday", "since", "until=2026-13-01", "until",
                    "since=2d&until=3d", "since", "since=1d&until=%C3%28", "until", "since=%2B1000000000-01-01T00:00:00Z", "since");
            bad.forEach((query, field) -> {
                TestServer.Reply r = s.get("/api/v1/usage?" + query, ADMIN);
                assertThat(r.status()).as(query + ": " + r.body()).isEqualTo(400);
                assertThat(r.body().path("field").asText()).as(query).isEqualTo(field);
            });
            assertThat(s.get("/api/v1/usage", null).status()).isEqualTo(401);
            JsonNode empty = usage(s, ADMIN, "since=2026-01-01&until=2026-01-02T00:00:00Z&by=day");
            assertThat(empty.path("since").asText()).isEqualTo("2026-01-01T00:00:00Z");
            assertThat(empty.path("groups").size()).isZero();
            assertThat(empty.path("total").path("gpuSecondsAllocated").asDouble()).isZero();
        }
    }

    private static final Pattern SAMPLE = Pattern.compile("^(\\w+)\\{([^}]*)\\} (\\S+)$", Pattern.MULTILINE);

    /** The value of a counter for one tenant in the Prometheus text; 0 when absent. */
    private static double counter(String text, String name, String tenant) {
        Matcher m = SAMPLE.matcher(text);
        while (m.find()) {
            if (m.group(1).equals(name) && m.group(2).contains("tenant=\"" + tenant + "\"")) return Double.parseDouble(m.group(3));
        }
        return 0;
    }
}
