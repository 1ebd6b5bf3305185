package io.gpupool.server;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpupool.server.TestServer.Reply;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static io.gpupool.server.TestServer.ADMIN;
import static io.gpupool.server.TestServer.eventually;
import static org.assertj.core.api.Assertions.assertThat;

/** A restarted server rebuilds queue and allocations from the store and carries on (on SQLite and PostgreSQL). */
abstract class RestartContractTest {
    protected abstract ServerOptions options();

    @Test
    void a_restart_restores_the_queue_the_allocations_tokens_and_idempotency_keys() {
        Map<String, String> before = new HashMap<>();
        Map<String, String> allocations = new HashMap<>();
        String token;
        List<String> ids = new ArrayList<>();
        try (TestServer s = TestServer.start(options())) {
            token = s.tenantWithToken("team", 2);
            s.call("PUT", "/api/v1/config", ADMIN, Map.of("policy", "fcfs"), Map.of());
            for (int i = 0; i < 12; i++) {
                Reply r = s.call("POST", "/api/v1/jobs", token, Map.of("name", "j" + i, "numGpus", i % 3 == 0 ? 4 : 1,
                        "gpuMilli", i % 3 == 1 ? 500 : 1000, "command", List.of("run", String.valueOf(i))), Map.of("Idempotency-Key", "k" + i));
                assertThat(r.status()).isEqualTo(201);
                ids.add(r.text("id"));
            }
            s.delete("/api/v1/jobs/" + ids.get(11), token);
            eventually("the pool fills", () -> s.get("/api/v1/pool", ADMIN).body().path("runningCount").asInt() >= 5);
            s.post("/api/v1/nodes/t4-0000/cordon", ADMIN, null);
            for (String id : ids) {
                JsonNode j = s.get("/api/v1/jobs/" + id, token).body();
                before.put(id, j.path("state").asText());
                allocations.put(id, j.path("allocation").toString());
            }
        }
        try (TestServer s = TestServer.start(options())) {
            assertThat(s.output).contains("active jobs restored");
            for (String id : ids) {
                JsonNode j = s.get("/api/v1/jobs/" + id, token).body();
                assertThat(j.path("state").asText()).as(id).isEqualTo(before.get(id));
                assertThat(j.path("allocation").toString()).as(id).isEqualTo(allocations.get(id));
            }
            s.server.pool().checkConsistency().join();
            // the same key after the restart still finds the same job
            Reply again = s.call("POST", "/api/v1/jobs", token, Map.of("name", "j0", "numGpus", 4, "gpuMilli", 1000,
                    "command", List.of("run", "0")), Map.of("Idempotency-Key", "k0"));
            assertThat(again.status()).isEqualTo(200);
            assertThat(again.text("id")).isEqualTo(ids.get(0));
            // and it carries on: new ids follow the old ones, finished jobs free their GPUs for the queue
            Reply fresh = s.post("/api/v1/jobs", token, Map.of("numGpus", 1, "command", List.of("new")));
            assertThat(Long.parseLong(fresh.text("id").substring(1))).isGreaterThan(Long.parseLong(ids.get(11).substring(1)));
            assertThat(s.get("/api/v1/config", ADMIN).text("policy")).isEqualTo("fcfs");
            assertThat(s.get("/api/v1/nodes", ADMIN).raw().body()).contains("\"name\":\"t4-0000\",\"model\":\"T4\",\"productName\":\"NVIDIA T4\",\"cordoned\":true");
            String running = ids.stream().filter(id -> before.get(id).equals("RUNNING")).findFirst().orElseThrow();
            String waiting = ids.stream().filter(id -> before.get(id).equals("PENDING")).findFirst().orElseThrow();
            // static nodes have no agent: ending the running jobs (here by cancelling them) frees their GPUs
            for (String id : ids) if (before.get(id).equals("RUNNING")) s.delete("/api/v1/jobs/" + id, token);
            eventually("a waiting job starts", () -> s.get("/api/v1/jobs/" + waiting, token).text("state").equals("RUNNING"));
            assertThat(s.get("/api/v1/jobs/" + running, token).text("state")).isEqualTo("CANCELLED");
            s.server.pool().checkConsistency().join();
        }
    }
}
