package io.gpupool.server;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpupool.agent.AgentLauncher;
import io.gpupool.agent.node.NodeAgent;
import io.gpupool.server.core.AgentSettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static io.gpupool.server.TestServer.ADMIN;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 19, must show 1 (holds and edits): with a real node agent (fake GPUs) and real processes, a queued job is
 * held, edited (priority, GPU models, dependency), released and runs; a running job is requeued, its process stopped,
 * and it runs again as attempt 2; each change is in the job's history, and wrong states, cycles and other tenants'
 * jobs are refused.
 */
class HoldEditEndToEndTest {
    @TempDir Path dir;

    @Test
    void hold_update_release_and_requeue_round_trip_with_real_processes() throws Exception {
        ServerOptions o = TestServer.options(dir.resolve("server")).withCluster(null).withPolicy("fcfs")
                .withAgents(new AgentSettings(200, 10_000));
        NodeAgent agent = null;
        try (TestServer s = TestServer.start(o)) {
            String join = s.post("/api/v1/agent-tokens", ADMIN, Map.of("label", "he")).text("token");
            agent = AgentLauncher.start(AgentLauncher.Options.fake(s.base, join, "he-0", dir.resolve("he-0"), "4xA100-80GB")
                    .withKillGrace(Duration.ofMillis(800)));
            TestServer.eventually("node ready", () -> s.get("/api/v1/nodes", ADMIN).body().path("nodes").findValuesAsText("state").contains("ready"));
            String t = s.tenantWithToken("he", 1);
            String other = s.tenantWithToken("other", 1);

            // a long job, requeued while it runs: attempt 1 is stopped, attempt 2 runs
            String longJob = s.submitScript(t, "long", "echo attempt $GPUPOOL_ATTEMPT; sleep 60", null);
            TestServer.eventually("long runs", () -> s.get("/api/v1/jobs/" + longJob + "/logs", t).body().path("text").asText().contains("attempt 1"));
            assertThat(s.post("/api/v1/jobs/" + longJob + "/hold", t, Map.of()).status()).as("a running job is not held").isEqualTo(409);
            assertThat(s.post("/api/v1/jobs/" + longJob + "/requeue", other, Map.of()).status()).isEqualTo(404);
            TestServer.Reply rq = s.post("/api/v1/jobs/" + longJob + "/requeue", t, Map.of());
            assertThat(rq.status()).as(rq.body().toString()).isEqualTo(200);
            TestServer.eventually(Duration.ofSeconds(30), "attempt 2 runs",
                    () -> s.get("/api/v1/jobs/" + longJob + "/logs?attempt=2", t).body().path("text").asText().contains("attempt 2"));
            JsonNode attempts = s.get("/api/v1/jobs/" + longJob, t).body().path("attempts");
            assertThat(attempts.get(0).path("state").asText()).isEqualTo("STOPPED");
            assertThat(s.post("/api/v1/jobs/" + longJob + "/requeue", t, Map.of()).status()).isEqualTo(200);

            // a queued job (it waits for the long one): held, edited, its dependency cleared, released: it runs
            String queued = s.submitScript(t, "queued", "echo ran", Map.of("dependency", "afterok:" + longJob));
            assertThat(s.post("/api/v1/jobs/" + queued + "/release", t, Map.of()).status()).as("not held").isEqualTo(409);
            assertThat(s.post("/api/v1/jobs/" + queued + "/hold", t, Map.of()).status()).isEqualTo(200);
            assertThat(s.post("/api/v1/jobs/" + queued + "/hold", t, Map.of()).status()).as("already held").isEqualTo(409);
            TestServer.Reply up = s.call("PATCH", "/api/v1/jobs/" + queued, t,
                    Map.of("priority", 40, "gpuTypes", List.of("A100-80GB"), "dependency", ""), Map.of());
            assertThat(up.status()).as(up.body().toString()).isEqualTo(200);
            assertThat(up.body().path("priority").asInt()).isEqualTo(40);
            assertThat(up.body().path("gpuTypes").get(0).asText()).isEqualTo("A100-80GB");
            assertThat(up.body().path("dependency").isMissingNode()).isTrue();
            assertThat(up.text("state")).isEqualTo("PENDING");
            assertThat(up.text("waitReason")).as("still held by the user").contains("on hold");
            TestServer.Reply bad = s.call("PATCH", "/api/v1/jobs/" + queued, t, Map.of("gpuTypes", List.of("NoSuchGpu")), Map.of());
            assertThat(bad.status()).isEqualTo(422);
            assertThat(bad.text("field")).isEqualTo("gpuTypes[0]");
            assertThat(s.call("PATCH", "/api/v1/jobs/" + queued, t, Map.of("gpuTypes", List.of("T4")), Map.of()).status())
                    .as("no T4 in the pool: it could never run").isEqualTo(422);
            assertThat(s.call("PATCH", "/api/v1/jobs/" + queued, other, Map.of("priority", 1), Map.of()).status()).isEqualTo(404);
            assertThat(s.call("PATCH", "/api/v1/jobs/" + queued, ADMIN, Map.of("priority", 41), Map.of()).status()).as("an admin edits any job").isEqualTo(200);

            // a cycle is refused naming the job
            String waiter = s.submitScript(t, "waiter", "true", Map.of("dependency", "afterany:" + queued));
            TestServer.Reply cycle = s.call("PATCH", "/api/v1/jobs/" + queued, t, Map.of("dependency", "afterany:" + waiter), Map.of());
            assertThat(cycle.status()).isEqualTo(422);
            assertThat(cycle.text("field")).isEqualTo("dependency");
            assertThat(cycle.text("rule")).contains(waiter);
            assertThat(s.call("PATCH", "/api/v1/jobs/" + queued, t, Map.of("dependency", "afterany:" + queued), Map.of()).status()).isEqualTo(422);

            assertThat(s.post("/api/v1/jobs/" + queued + "/release", t, Map.of()).status()).isEqualTo(200);
            TestServer.eventually(Duration.ofSeconds(30), "the released job ran", () -> s.get("/api/v1/jobs/" + queued, t).text("state").equals("SUCCEEDED"));
            TestServer.eventually(Duration.ofSeconds(30), "its waiter ran", () -> s.get("/api/v1/jobs/" + waiter, t).text("state").equals("SUCCEEDED"));
            assertThat(s.call("PATCH", "/api/v1/jobs/" + queued, t, Map.of("priority", 1), Map.of()).status()).as("ended").isEqualTo(409);

            List<String> history = s.get("/api/v1/jobs/" + queued + "/events", t).body().path("events").findValuesAsText("type");
            assertThat(history.subList(0, 6)).containsExactly("SUBMITTED", "HELD", "UPDATED", "UPDATED", "RELEASED", "STARTED");
            assertThat(history.getLast()).isEqualTo("SUCCEEDED");
            JsonNode events = s.get("/api/v1/jobs/" + queued + "/events", t).body().path("events");
            assertThat(events.get(2).path("detail").asText()).contains("priority 0 -> 40").contains("gpuTypes [] -> [A100-80GB]")
                    .contains("dependency 'afterok:" + longJob + "' -> ''");
            assertThat(events.get(3).path("detail").asText()).contains("priority 40 -> 41").contains("admin");
            assertThat(s.get("/api/v1/jobs/" + longJob + "/events", t).body().path("events").findValuesAsText("type")).contains("REQUEUED");

            assertThat(s.delete("/api/v1/jobs/" + longJob, t).status()).isEqualTo(200);
            s.server.pool().checkConsistency().join();
        } finally {
            if (agent != null) agent.closeAndStopJobs("test over", Duration.ofSeconds(5));
        }
    }
}
