package io.gpupool.server;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static io.gpupool.server.TestServer.ADMIN;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Reservations over the API on a pool of static nodes (2 x 8 A100, 1 x 4 T4): refusals naming the field, who may do what,
 * a reservation surviving a restart with its effect on jobs, deletion; and a queued job's time limit edited within its
 * tenant's maximum, in its history.
 */
class ReservationApiTest {
    @TempDir Path dir;

    @Test
    void reservations_are_refused_with_the_field_survive_a_restart_and_keep_other_jobs_off_their_gpus() {
        ServerOptions o = TestServer.options(dir.resolve("server"));
        String member;
        try (TestServer s = TestServer.start(o)) {
            member = s.tenantWithToken("team", 1);
            s.tenantWithToken("rest", 1);
            Map<String, Object> ok = Map.of("name", "big", "tenant", "team", "gpus", 16, "model", "a100-80gb", "start", "+1h", "end", "+3h");
            assertThat(s.post("/api/v1/reservations", member, ok).status()).as("admins only").isEqualTo(403);
            refused(s, Map.of("tenant", "team", "gpus", 17, "model", "A100-80GB", "start", "+1h", "end", "+3h"), "gpus", "only 16 GPUs of model A100-80GB");
            refused(s, Map.of("tenant", "team", "gpus", 1, "model", "H100-80GB", "start", "+1h", "end", "+3h"), "model", "no GPU of model 'H100-80GB'");
            refused(s, Map.of("tenant", "team", "gpus", 1, "model", "NoSuchGpu", "start", "+1h", "end", "+3h"), "model", "unknown GPU model");
            refused(s, Map.of("tenant", "team", "nodes", List.of("nope"), "start", "+1h", "end", "+3h"), "nodes[0]", "unknown node 'nope'");
            refused(s, Map.of("tenant", "team", "gpus", 1, "model", "T4", "start", "+1h", "end", "+1h"), "end", "must be after the start");
            refused(s, Map.of("tenant", "team", "gpus", 1, "model", "T4", "start", 1000, "end", 2000), "end", "in the past");
            refused(s, Map.of("tenant", "team", "gpus", 1, "model", "T4", "start", "tomorrow", "end", "+3h"), "start", "ISO-8601");
            refused(s, Map.of("tenant", "ghost", "gpus", 1, "model", "T4", "start", "+1h", "end", "+3h"), "tenant", "unknown tenant");
            refused(s, Map.of("tenant", "team", "gpus", 1, "model", "T4", "nodes", List.of("t4-0000"), "start", "+1h", "end", "+3h"), "nodes", "not both");

            TestServer.Reply made = s.post("/api/v1/reservations", ADMIN, ok);
            assertThat(made.status()).as(made.body().toString()).isEqualTo(201);
            assertThat(made.body().path("gpus").asInt()).isEqualTo(16);
            assertThat(made.body().path("model").asText()).isEqualTo("A100-80GB");
            refused(s, Map.of("tenant", "rest", "gpus", 1, "model", "A100-80GB", "start", "+2h", "end", "+4h"), "gpus", "big (tenant team, 16 GPUs");
            refused(s, Map.of("name", "big", "tenant", "rest", "gpus", 1, "model", "T4", "start", "+2h", "end", "+4h"), "name", "already exists");
            TestServer.Reply unnamed = s.post("/api/v1/reservations", ADMIN, Map.of("tenant", "rest", "nodes", List.of("t4-0000"), "start", "+5h", "end", "+6h"));
            assertThat(unnamed.text("name")).isEqualTo("rest-1");
            assertThat(unnamed.body().path("gpus").asInt()).isEqualTo(4);
        }
        try (TestServer s = TestServer.start(o)) {
            // after a restart: both are back and still decide placement
            assertThat(s.get("/api/v1/reservations", member).body().path("reservations").findValuesAsText("name")).containsExactly("big", "rest-1");
            String rest = s.post("/api/v1/tenants/rest/tokens", ADMIN, Map.of()).text("token");
            String waits = s.post("/api/v1/jobs", rest, Map.of("numGpus", 1, "gpuTypes", List.of("A100-80GB"), "command", List.of("true"))).text("id");
            TestServer.eventually("the job waits for the reservation", () ->
                    "reservation".equals(s.get("/api/v1/jobs/" + waits, rest).body().path("waitStatus").path("plugin").asText()));
            assertThat(s.get("/api/v1/jobs/" + waits, rest).body().path("waitReason").asText()).contains("reserved by big (tenant team, 16 GPUs");
            // a time limit that ends before the window lets it backfill
            TestServer.Reply edit = s.call("PATCH", "/api/v1/jobs/" + waits, rest, Map.of("timeLimit", "30"), Map.of());
            assertThat(edit.status()).as(edit.body().toString()).isEqualTo(200);
            TestServer.eventually("the limited job runs", () -> "RUNNING".equals(s.get("/api/v1/jobs/" + waits, rest).body().path("state").asText()));
            String other = s.post("/api/v1/jobs", rest, Map.of("numGpus", 1, "gpuTypes", List.of("A100-80GB"), "command", List.of("true"))).text("id");
            TestServer.eventually("it waits", () -> "reservation".equals(s.get("/api/v1/jobs/" + other, rest).body().path("waitStatus").path("plugin").asText()));
            assertThat(s.delete("/api/v1/reservations/big", member).status()).isEqualTo(403);
            assertThat(s.delete("/api/v1/reservations/big", ADMIN).status()).isEqualTo(200);
            assertThat(s.delete("/api/v1/reservations/big", ADMIN).status()).isEqualTo(404);
            TestServer.eventually("without the reservation it runs", () -> "RUNNING".equals(s.get("/api/v1/jobs/" + other, rest).body().path("state").asText()));
            assertThat(s.get("/api/v1/reservations/rest-1", member).body().path("nodes").get(0).asText()).isEqualTo("t4-0000");
            TestServer.eventually("the dashboard's snapshot lists it", () -> s.get("/api/v1/pool", member).body().path("reservations").findValuesAsText("name").equals(List.of("rest-1")));
        }
    }

    @Test
    void a_queued_jobs_time_limit_is_edited_within_the_tenants_maximum_and_in_its_history() {
        try (TestServer s = TestServer.start(TestServer.options(dir.resolve("server")))) {
            assertThat(s.post("/api/v1/tenants", ADMIN, Map.of("name", "lim", "defaultTimeLimit", 30, "maxTimeLimit", "2:00:00")).status()).isEqualTo(201);
            String t = s.post("/api/v1/tenants/lim/tokens", ADMIN, Map.of()).text("token");
            // the T4 node (static: nothing ends there) is taken, so the next T4 job stays queued
            Map<String, Object> job = new HashMap<>(Map.of("numGpus", 4, "gpuTypes", List.of("T4"), "command", List.of("true")));
            assertThat(s.post("/api/v1/jobs", t, job).status()).isEqualTo(201);
            String id = s.post("/api/v1/jobs", t, job).text("id");
            TestServer.Reply over = s.call("PATCH", "/api/v1/jobs/" + id, t, Map.of("timeLimit", "3:00:00"), Map.of());
            assertThat(over.status()).isEqualTo(422);
            assertThat(over.text("field")).isEqualTo("timeLimit");
            assertThat(over.text("rule")).contains("maximum time limit of 02:00:00");
            assertThat(s.call("PATCH", "/api/v1/jobs/" + id, t, Map.of("timeLimit", "1:30:00"), Map.of()).body().path("timeLimit").asText()).isEqualTo("01:30:00");
            Map<String, Object> none = new HashMap<>();
            none.put("timeLimit", null);
            assertThat(s.call("PATCH", "/api/v1/jobs/" + id, t, none, Map.of()).body().path("timeLimit").asText()).as("the tenant's default").isEqualTo("00:30:00");
            JsonNode events = s.get("/api/v1/jobs/" + id + "/events", t).body().path("events");
            assertThat(events.findValuesAsText("detail")).anyMatch(d -> d.startsWith("timeLimit 00:30:00 -> 01:30:00"))
                    .anyMatch(d -> d.startsWith("timeLimit 01:30:00 -> 00:30:00"));
        }
    }

    private static void refused(TestServer s, Map<String, Object> body, String field, String words) {
        TestServer.Reply r = s.post("/api/v1/reservations", ADMIN, body);
        assertThat(r.status()).as(r.body().toString()).isEqualTo(422);
        assertThat(r.text("field")).isEqualTo(field);
        assertThat(r.text("rule")).contains(words);
    }
}
