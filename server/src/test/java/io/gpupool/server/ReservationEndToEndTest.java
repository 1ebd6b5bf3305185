package io.gpupool.server;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpupool.agent.AgentLauncher;
import io.gpupool.agent.node.NodeAgent;
import io.gpupool.server.core.AgentSettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static io.gpupool.server.TestServer.ADMIN;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 19, must show 1 (reservations): a server and a real node agent with 2 fake GPUs run real processes around an
 * advance reservation of both GPUs for tenant "res" over a window a few seconds ahead. Before the window another tenant's
 * job whose time limit ends before it runs on the reserved GPUs (backfill), while one whose limit would cross the window
 * and one without a limit stay queued with the reason {@code reservation}; inside the window the tenant's jobs run there
 * (one that names the reservation, one that does not) and the other tenant's jobs still wait; they start once it ends.
 * The assertions compare the server's own times (each job's start and end as the server recorded them with the
 * reservation's window), so the outcome depends on the rules, not on how fast the machine is; the margins are seconds.
 */
class ReservationEndToEndTest {
    @TempDir Path dir;

    @Test
    void a_reservation_keeps_its_gpus_for_its_tenant_across_its_window_while_backfill_fills_them_before_it() throws Exception {
        ServerOptions o = TestServer.options(dir.resolve("server")).withCluster(null).withAgents(new AgentSettings(200, 10_000));
        NodeAgent agent = null;
        try (TestServer s = TestServer.start(o)) {
            String join = s.post("/api/v1/agent-tokens", ADMIN, Map.of()).text("token");
            agent = AgentLauncher.start(AgentLauncher.Options.fake(s.base, join, "resv-1", dir.resolve("node"), "2xA100-80GB"));
            TestServer.eventually("the node is ready", () -> s.get("/api/v1/nodes", ADMIN).body().path("nodes").findValuesAsText("state").contains("ready"));
            String res = s.tenantWithToken("res", 1);
            String other = s.tenantWithToken("other", 1);

            // refused at creation, naming the field; members may not make one
            assertThat(reserve(s, ADMIN, Map.of("tenant", "res", "gpus", 3, "model", "A100-80GB", "start", "+8s", "end", "+16s")).text("field")).isEqualTo("gpus");
            assertThat(reserve(s, ADMIN, Map.of("tenant", "res", "gpus", 2, "model", "A100-80GB", "start", "+8s", "end", "+4s")).text("field")).isEqualTo("end");
            assertThat(reserve(s, ADMIN, Map.of("tenant", "nobody", "gpus", 2, "model", "A100-80GB", "start", "+8s", "end", "+16s")).text("field")).isEqualTo("tenant");
            assertThat(reserve(s, res, Map.of("tenant", "res", "gpus", 2, "model", "A100-80GB", "start", "+8s", "end", "+16s")).status()).isEqualTo(403);

            TestServer.Reply made = reserve(s, ADMIN, Map.of("name", "deadline", "tenant", "res", "gpus", 2, "model", "A100-80GB",
                    "start", "+8s", "end", "+16s"));
            assertThat(made.status()).isEqualTo(201);
            long start = made.body().path("startMs").asLong(), end = made.body().path("endMs").asLong();
            assertThat(made.body().path("gpuList").size()).isEqualTo(2);
            assertThat(s.get("/api/v1/reservations", other).body().path("reservations").findValuesAsText("name")).containsExactly("deadline");

            String fits = submit(s, other, "0:03", null, "sleep 1");           // ends at the latest 3 s after its start: before the window
            String crosses = submit(s, other, "0:30", null, "true");          // would run into the window
            String unlimited = submit(s, other, null, null, "true");          // no limit: may not take reserved GPUs before the window ends
            String named = submit(s, res, null, "deadline", "sleep 2");       // runs in the reservation: waits for its window
            String tenants = submit(s, res, null, null, "sleep 2");           // the tenant's own job: the reserved GPUs are its in the window
            assertThat(s.post("/api/v1/jobs", other, job(null, "deadline", "true")).text("field")).as("another tenant's reservation").isEqualTo("reservation");

            for (String id : List.of(crosses, unlimited, named)) {
                TestServer.eventually(Duration.ofSeconds(30), id + " waits for the reservation",
                        () -> "reservation".equals(s.get("/api/v1/jobs/" + id, ADMIN).body().path("waitStatus").path("plugin").asText()));
            }
            JsonNode f = ended(s, fits);
            assertThat(f.path("state").asText()).isEqualTo("SUCCEEDED");
            assertThat(f.path("endedMs").asLong()).as("backfilled before the window, and done before it").isLessThan(start);

            for (String id : List.of(named, tenants)) {
                JsonNode j = ended(s, id);
                assertThat(j.path("state").asText()).isEqualTo("SUCCEEDED");
                assertThat(j.path("startedMs").asLong()).as(id + " starts inside the window").isBetween(start, end - 1);
            }
            for (String id : List.of(crosses, unlimited)) {
                JsonNode j = ended(s, id);
                assertThat(j.path("state").asText()).isEqualTo("SUCCEEDED");
                assertThat(j.path("startedMs").asLong()).as(id + " starts only once the window is over").isGreaterThanOrEqualTo(end);
            }
            TestServer.eventually("the ended reservation is gone", () -> s.get("/api/v1/reservations", ADMIN).body().path("reservations").isEmpty());
            s.server.pool().checkConsistency().join();
        } finally {
            if (agent != null) agent.closeAndStopJobs("test over", Duration.ofSeconds(5));
        }
    }

    private static TestServer.Reply reserve(TestServer s, String token, Map<String, Object> body) {
        return s.post("/api/v1/reservations", token, body);
    }

    private static Map<String, Object> job(String limit, String reservation, String script) {
        Map<String, Object> j = new HashMap<>(Map.of("numGpus", 1, "command", List.of("sh", "-c", script)));
        if (limit != null) j.put("timeLimit", limit);
        if (reservation != null) j.put("reservation", reservation);
        return j;
    }

    private static String submit(TestServer s, String token, String limit, String reservation, String script) {
        TestServer.Reply r = s.post("/api/v1/jobs", token, job(limit, reservation, script));
        assertThat(r.status()).as(r.body().toString()).isEqualTo(201);
        return r.text("id");
    }

    private static JsonNode ended(TestServer s, String id) {
        TestServer.eventually(Duration.ofSeconds(60), id + " ends",
                () -> !List.of("PENDING", "RUNNING").contains(s.get("/api/v1/jobs/" + id, ADMIN).body().path("state").asText()));
        return s.get("/api/v1/jobs/" + id, ADMIN).body();
    }
}
