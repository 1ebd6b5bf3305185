package io.gpupool.server;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static io.gpupool.server.TestServer.ADMIN;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Job arrays through the API on a static pool (jobs placed there run until cancelled): one submission queues every
 * task, at most the cap run, the queue shows the array as one line with counts, status and cancel work on the whole
 * array and on one task, bad specs are 422 naming the field, and a restart keeps the cap.
 */
class JobArrayApiTest {
    @TempDir Path dir;

    @Test
    void an_array_with_a_cap_runs_at_most_the_cap_and_is_one_queue_line_with_counts() {
        try (TestServer s = TestServer.start(TestServer.options(dir).withPolicy("fcfs"))) {
            String team = s.tenantWithToken("team", 1);
            TestServer.Reply r = s.post("/api/v1/jobs", team, Map.of("name", "sweep", "numGpus", 1, "array", "0-9,20-29:3%4",
                    "command", List.of("true")));
            assertThat(r.status()).as(r.body().toString()).isEqualTo(201);
            String id = r.text("id");
            assertThat(r.body().path("tasks").asInt()).isEqualTo(14);   // 0..9 and 20, 23, 26, 29
            assertThat(r.body().path("cap").asInt()).isEqualTo(4);
            assertThat(r.text("firstTask")).isEqualTo(id + "_0");

            TestServer.eventually("4 tasks run", () -> s.get("/api/v1/jobs/" + id, team).body().path("counts").path("RUNNING").asInt() == 4);
            JsonNode array = s.get("/api/v1/jobs/" + id, team).body();
            assertThat(array.path("state").asText()).isEqualTo("RUNNING");
            assertThat(array.path("counts").path("PENDING").asInt()).isEqualTo(10);
            JsonNode waiting = s.get("/api/v1/jobs/" + id + "_23", team).body();
            assertThat(waiting.path("state").asText()).isEqualTo("PENDING");
            assertThat(waiting.path("waitStatus").path("plugin").asText()).isEqualTo("array-cap");
            assertThat(waiting.path("array").path("id").asText()).isEqualTo(id);
            assertThat(waiting.path("array").path("index").asInt()).isEqualTo(23);

            // a plain job behind the capped array runs on the free GPUs (strict FCFS is not blocked by the cap)
            String plain = s.post("/api/v1/jobs", team, Map.of("numGpus", 2, "command", List.of("true"))).text("id");
            TestServer.eventually("the plain job runs", () -> s.get("/api/v1/jobs/" + plain, team).text("state").equals("RUNNING"));

            // the pool view is a snapshot the engine loop takes every 250 ms: wait for one that holds the array
            TestServer.eventually("the pool view shows the array", () -> s.get("/api/v1/pool", team).body().path("queue").findValuesAsText("id").contains(id));
            JsonNode queue = s.get("/api/v1/pool", team).body().path("queue");
            assertThat(queue).hasSize(1);
            assertThat(queue.get(0).path("id").asText()).isEqualTo(id);
            assertThat(queue.get(0).path("array").path("pending").asInt()).isEqualTo(10);
            assertThat(queue.get(0).path("array").path("running").asInt()).isEqualTo(4);

            // cancel one running task: the next one starts, still 4 at once
            assertThat(s.delete("/api/v1/jobs/" + id + "_0", team).status()).isEqualTo(200);
            TestServer.eventually("task 4 starts", () -> s.get("/api/v1/jobs/" + id + "_4", team).text("state").equals("RUNNING"));
            assertThat(s.get("/api/v1/jobs/" + id, team).body().path("counts").path("RUNNING").asInt()).isEqualTo(4);

            JsonNode page = s.get("/api/v1/jobs/" + id + "/tasks?limit=5", team).body();
            assertThat(ids(page.path("taskPage"))).containsExactly(id + "_0", id + "_1", id + "_2", id + "_3", id + "_4");
            JsonNode next = s.get("/api/v1/jobs/" + id + "/tasks?limit=100&cursor=" + page.path("nextCursor").asText(), team).body();
            assertThat(ids(next.path("taskPage"))).hasSize(9).endsWith(id + "_29");

            // cancel the whole array: every active task, then it is CANCELLED and a second cancel is a conflict
            TestServer.Reply c = s.delete("/api/v1/jobs/" + id, team);
            assertThat(c.status()).as(c.body().toString()).isEqualTo(200);
            assertThat(c.body().path("cancelled").asInt()).isEqualTo(13);
            assertThat(c.body().path("counts").path("CANCELLED").asInt()).isEqualTo(14);
            assertThat(c.text("state")).isEqualTo("CANCELLED");
            assertThat(s.delete("/api/v1/jobs/" + id, team).status()).isEqualTo(409);

            // another tenant does not see it
            String other = s.tenantWithToken("other", 1);
            assertThat(s.get("/api/v1/jobs/" + id, other).status()).isEqualTo(404);
            assertThat(s.delete("/api/v1/jobs/" + id, other).status()).isEqualTo(404);
        }
    }

    private static List<String> ids(JsonNode jobs) {
        List<String> ids = new ArrayList<>();
        for (JsonNode j : jobs) ids.add(j.path("id").asText());
        return ids;
    }

    @Test
    void bad_array_specs_are_422_naming_the_field_and_queue_nothing() {
        try (TestServer s = TestServer.start(TestServer.options(dir))) {
            String team = s.tenantWithToken("team", 1);
            for (Object bad : List.of("", "5-1", "0-3%0", "a-b", "1,,2", "0-4000001", "3:2", "0-100000", 7)) {
                TestServer.Reply r = s.post("/api/v1/jobs", team, Map.of("numGpus", 1, "array", bad, "command", List.of("true")));
                assertThat(r.status()).as(bad + ": " + r.body()).isEqualTo(bad instanceof String ? 422 : 400);
                assertThat(r.text("field")).as(String.valueOf(bad)).isEqualTo("array");
            }
            assertThat(s.get("/api/v1/jobs?state=PENDING", ADMIN).body().path("jobs")).isEmpty();
            // a task shape the pool can never hold: refused as a whole
            TestServer.Reply never = s.post("/api/v1/jobs", team, Map.of("numGpus", 64, "array", "0-9", "command", List.of("true")));
            assertThat(never.status()).isEqualTo(422);
            assertThat(s.get("/api/v1/jobs?state=PENDING", ADMIN).body().path("jobs")).isEmpty();
        }
    }

    @Test
    void an_idempotent_retry_returns_the_same_array_and_a_restart_keeps_its_cap() {
        String id;
        try (TestServer s = TestServer.start(TestServer.options(dir).withPolicy("fcfs"))) {
            String team = s.tenantWithToken("team", 1);
            Map<String, Object> body = Map.of("numGpus", 1, "array", "1-20%3", "command", List.of("true"));
            TestServer.Reply first = s.call("POST", "/api/v1/jobs", team, body, Map.of("Idempotency-Key", "sweep-1"));
            assertThat(first.status()).isEqualTo(201);
            id = first.text("id");
            TestServer.Reply again = s.call("POST", "/api/v1/jobs", team, body, Map.of("Idempotency-Key", "sweep-1"));
            assertThat(again.status()).isEqualTo(200);
            assertThat(again.text("id")).isEqualTo(id);
            assertThat(again.body().path("tasks").asInt()).isEqualTo(20);
            TestServer.Reply other = s.call("POST", "/api/v1/jobs", team, Map.of("numGpus", 1, "array", "1-21%3", "command", List.of("true")),
                    Map.of("Idempotency-Key", "sweep-1"));
            assertThat(other.status()).isEqualTo(409);
            TestServer.eventually("3 run", () -> s.get("/api/v1/jobs/" + id, team).body().path("counts").path("RUNNING").asInt() == 3);
        }
        try (TestServer s = TestServer.start(TestServer.options(dir).withPolicy("fcfs"))) {
            TestServer.eventually("restored: still 3 run", () -> s.get("/api/v1/jobs/" + id, ADMIN).body().path("counts").path("RUNNING").asInt() == 3);
            s.server.pool().checkConsistency().join();
            // a round after the restart keeps the others waiting on the cap
            TestServer.eventually("a round saw the cap", () -> s.get("/api/v1/jobs/" + id + "_20", ADMIN).body().path("waitStatus").path("plugin").asText().equals("array-cap"));
            assertThat(s.get("/api/v1/jobs/" + id, ADMIN).body().path("counts").path("RUNNING").asInt()).isEqualTo(3);
        }
    }
}
