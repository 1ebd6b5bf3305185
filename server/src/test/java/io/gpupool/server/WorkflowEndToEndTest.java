package io.gpupool.server;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpupool.agent.AgentLauncher;
import io.gpupool.agent.node.NodeAgent;
import io.gpupool.server.core.AgentSettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static io.gpupool.server.TestServer.ADMIN;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 19, must show 1 (dependencies, holds): a server and two real node agents with fake GPUs. An afterok chain of
 * three real processes runs in order (each starts after its parent's process ended, by the agents' records and by the
 * order the processes appended to one file); a parent that exits 1 fails its afterok child with the reason, and keeps
 * a child with killOnInvalidDep false queued and held.
 */
class WorkflowEndToEndTest {
    @TempDir Path dir;

    @Test
    void an_afterok_chain_of_three_runs_in_order_and_a_failed_parent_fails_or_holds_its_child() throws Exception {
        ServerOptions o = TestServer.options(dir.resolve("server")).withCluster(null).withPolicy("fcfs")
                .withAgents(new AgentSettings(200, 10_000));
        List<NodeAgent> agents = new ArrayList<>();
        try (TestServer s = TestServer.start(o)) {
            String join = s.post("/api/v1/agent-tokens", ADMIN, Map.of("label", "wf")).text("token");
            for (int i = 0; i < 2; i++) {
                agents.add(AgentLauncher.start(AgentLauncher.Options.fake(s.base, join, "wf-" + i, dir.resolve("wf-" + i), "4xA100-80GB")
                        .withKillGrace(Duration.ofMillis(800))));
            }
            TestServer.eventually("two nodes ready", () -> s.get("/api/v1/nodes", ADMIN).body().path("nodes").findValuesAsText("state")
                    .stream().filter("ready"::equals).count() == 2);
            String t = s.tenantWithToken("wf", 1);
            Path log = dir.resolve("order.log");
            String a = s.submitScript(t, "step-a", "echo a >> " + log + "; sleep 0.5", null);
            String b = s.submitScript(t, "step-b", "echo b >> " + log + "; sleep 0.5", Map.of("dependency", "afterok:" + a));
            String c = s.submitScript(t, "step-c", "echo c >> " + log, Map.of("dependency", "afterok:" + b));
            String bad = s.submitScript(t, "bad", "exit 1", null);
            String failsWithIt = s.submitScript(t, "after-bad", "echo never >> " + log, Map.of("dependency", "afterok:" + bad));
            String keptHeld = s.submitScript(t, "after-bad-kept", "echo never >> " + log, Map.of("dependency", "afterok:" + bad, "killOnInvalidDep", false));

            TestServer.eventually(Duration.ofSeconds(60), "the chain ends", () -> s.get("/api/v1/jobs/" + c, t).text("state").equals("SUCCEEDED"));
            TestServer.eventually(Duration.ofSeconds(30), "the child of the failed parent fails",
                    () -> s.get("/api/v1/jobs/" + failsWithIt, t).text("state").equals("FAILED"));
            assertThat(s.get("/api/v1/jobs/" + bad, t).text("state")).isEqualTo("FAILED");
            assertThat(s.get("/api/v1/jobs/" + failsWithIt, t).text("message")).contains("afterok:" + bad).contains("FAILED");
            JsonNode kept = s.get("/api/v1/jobs/" + keptHeld, t).body();
            assertThat(kept.path("state").asText()).isEqualTo("PENDING");
            assertThat(kept.path("waitReason").asText()).contains("can never be met");
            assertThat(kept.path("attempts")).isEmpty();
            assertThat(s.get("/api/v1/jobs/" + failsWithIt, t).body().path("attempts")).as("never ran").isEmpty();

            assertThat(Files.readAllLines(log)).containsExactly("a", "b", "c");
            long[] ra = run(s, t, a), rb = run(s, t, b), rc = run(s, t, c);
            assertThat(rb[0]).as("b starts after a's process ended").isGreaterThanOrEqualTo(ra[1]);
            assertThat(rc[0]).as("c starts after b's process ended").isGreaterThanOrEqualTo(rb[1]);
            s.server.pool().checkConsistency().join();
        } finally {
            for (NodeAgent a : agents) a.closeAndStopJobs("test over", Duration.ofSeconds(5));
        }
    }

    /** {start, end} of the job's one attempt as its agent reported them. */
    private static long[] run(TestServer s, String token, String id) {
        TestServer.eventually(id + " end reported", () -> !s.get("/api/v1/jobs/" + id, token).body().path("attempts").path(0).path("endedMs").isNull());
        JsonNode at = s.get("/api/v1/jobs/" + id, token).body().path("attempts");
        assertThat(at).hasSize(1);
        return new long[] {at.get(0).path("startedMs").asLong(), at.get(0).path("endedMs").asLong()};
    }
}
