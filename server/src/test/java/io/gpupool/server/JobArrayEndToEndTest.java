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
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import static io.gpupool.server.TestServer.ADMIN;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 19, must show 1 (arrays): a server and three real node agents with fake GPUs (24 GPUs) run a 200-task array
 * capped at 16 as real processes. From the start and end of every attempt as its agent reported them, never more than
 * 16 tasks ran at once (and the cap, not the pool, was the limit: more than 8 did); every task printed the index and
 * array id its environment gave it, and every index ran exactly once.
 */
class JobArrayEndToEndTest {
    private static final int TASKS = 200;
    private static final int CAP = 16;

    @TempDir Path dir;

    @Test
    void a_200_task_array_capped_at_16_never_runs_more_than_16_and_every_task_sees_its_index() throws Exception {
        ServerOptions o = TestServer.options(dir.resolve("server")).withCluster(null).withPolicy("fair-share")
                .withAgents(new AgentSettings(200, 10_000));
        List<NodeAgent> agents = new ArrayList<>();
        try (TestServer s = TestServer.start(o)) {
            String join = s.post("/api/v1/agent-tokens", ADMIN, Map.of("label", "arrays")).text("token");
            for (int i = 0; i < 3; i++) {
                String name = "arr-" + i;
                agents.add(AgentLauncher.start(AgentLauncher.Options.fake(s.base, join, name, dir.resolve(name), "8xA100-80GB")
                        .withKillGrace(Duration.ofMillis(800))));
            }
            TestServer.eventually("three nodes ready", () -> s.get("/api/v1/nodes", ADMIN).body().path("nodes").findValuesAsText("state")
                    .stream().filter("ready"::equals).count() == 3);
            String team = s.tenantWithToken("sweep", 1);
            TestServer.Reply r = s.post("/api/v1/jobs", team, Map.of("name", "sweep", "numGpus", 1, "array", "0-" + (TASKS - 1) + "%" + CAP,
                    "command", List.of("sh", "-c", "echo \"task $GPUPOOL_ARRAY_TASK_ID of $GPUPOOL_ARRAY_JOB_ID\"; sleep 0.3")));
            assertThat(r.status()).as(r.body().toString()).isEqualTo(201);
            String array = r.text("id");

            TestServer.eventually(Duration.ofSeconds(180), "every task succeeded",
                    () -> s.get("/api/v1/jobs/" + array, team).body().path("counts").path("SUCCEEDED").asInt() == TASKS);
            assertThat(s.get("/api/v1/jobs/" + array, team).text("state")).isEqualTo("SUCCEEDED");

            List<long[]> runs = new ArrayList<>();   // {start, end} of every attempt, as the agents reported them
            TreeSet<Integer> seen = new TreeSet<>();
            for (int i = 0; i < TASKS; i++) {
                String id = array + "_" + i;
                JsonNode job = s.get("/api/v1/jobs/" + id, team).body();
                assertThat(job.path("attempts")).as(id + " ran once").hasSize(1);
                JsonNode a = job.path("attempts").get(0);
                TestServer.eventually(id + " end reported", () -> !s.get("/api/v1/jobs/" + id, team).body().path("attempts").get(0).path("endedMs").isNull());
                a = s.get("/api/v1/jobs/" + id, team).body().path("attempts").get(0);
                runs.add(new long[] {a.path("startedMs").asLong(), a.path("endedMs").asLong()});
                String node = a.path("node").asText();
                TestServer.eventually(id + " output complete", () -> s.get("/api/v1/jobs/" + id + "/logs?node=" + node, team).body().path("complete").asBoolean());
                String text = s.get("/api/v1/jobs/" + id + "/logs?node=" + node, team).body().path("text").asText().trim();
                assertThat(text).isEqualTo("task " + i + " of " + array);
                seen.add(i);
            }
            assertThat(seen).hasSize(TASKS);
            int most = mostAtOnce(runs);
            assertThat(most).as("tasks running at once").isLessThanOrEqualTo(CAP).isGreaterThan(8);
            s.server.pool().checkConsistency().join();
        } finally {
            for (NodeAgent a : agents) a.closeAndStopJobs("test over", Duration.ofSeconds(5));
        }
    }

    /** The most intervals that overlap at one instant (an end at t comes before a start at t). */
    static int mostAtOnce(List<long[]> runs) {
        List<long[]> edges = new ArrayList<>();
        for (long[] r : runs) {
            edges.add(new long[] {r[0], 1});
            edges.add(new long[] {r[1], -1});
        }
        edges.sort((x, y) -> x[0] != y[0] ? Long.compare(x[0], y[0]) : Long.compare(x[1], y[1]));
        int now = 0, most = 0;
        for (long[] e : edges) most = Math.max(most, now += (int) e[1]);
        return most;
    }
}
