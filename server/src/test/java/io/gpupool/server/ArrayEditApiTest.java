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
 * hold, release and PATCH on an array's id apply to each of its queued tasks (held ones, for a release), each with the
 * event in its history; running tasks are left alone; another tenant's array is 404. Static nodes: 2 x 8 A100, so of four
 * 8-GPU tasks two run and two wait.
 */
class ArrayEditApiTest {
    @TempDir Path dir;

    @Test
    void hold_release_and_update_on_an_array_apply_to_its_queued_tasks() {
        try (TestServer s = TestServer.start(TestServer.options(dir.resolve("server")))) {
            String t = s.tenantWithToken("sweep", 1);
            String other = s.tenantWithToken("other", 1);
            TestServer.Reply a = s.post("/api/v1/jobs", t, Map.of("numGpus", 8, "gpuTypes", List.of("A100-80GB"), "array", "0-3",
                    "command", List.of("true")));
            assertThat(a.status()).as(a.body().toString()).isEqualTo(201);
            String array = a.text("id");
            TestServer.eventually("two tasks run", () -> states(s, t, array).stream().filter("RUNNING"::equals).count() == 2);

            assertThat(s.post("/api/v1/jobs/" + array + "/hold", other, Map.of()).status()).isEqualTo(404);
            TestServer.Reply held = s.post("/api/v1/jobs/" + array + "/hold", t, Map.of());
            assertThat(held.status()).as(held.body().toString()).isEqualTo(200);
            assertThat(held.body().path("tasks").asInt()).isEqualTo(2);
            assertThat(s.post("/api/v1/jobs/" + array + "/hold", t, Map.of()).body().path("tasks").asInt()).as("already held").isZero();
            TestServer.Reply up = s.call("PATCH", "/api/v1/jobs/" + array, t, Map.of("priority", 7, "timeLimit", "10"), Map.of());
            assertThat(up.body().path("tasks").asInt()).isEqualTo(2);
            List<String> queued = new ArrayList<>();
            for (JsonNode task : s.get("/api/v1/jobs/" + array + "/tasks", t).body().path("taskPage")) {
                if (task.path("state").asText().equals("PENDING")) queued.add(task.path("id").asText());
            }
            assertThat(queued).hasSize(2);
            for (String id : queued) {
                JsonNode j = s.get("/api/v1/jobs/" + id, t).body();
                assertThat(j.path("priority").asInt()).isEqualTo(7);
                assertThat(j.path("timeLimit").asText()).isEqualTo("00:10:00");
                assertThat(s.get("/api/v1/jobs/" + id + "/events", t).body().path("events").findValuesAsText("type")).contains("HELD", "UPDATED");
            }
            assertThat(s.post("/api/v1/jobs/" + array + "/release", t, Map.of()).body().path("tasks").asInt()).isEqualTo(2);
            for (String id : queued) {
                assertThat(s.get("/api/v1/jobs/" + id + "/events", t).body().path("events").findValuesAsText("type")).contains("RELEASED");
            }
        }
    }

    private static List<String> states(TestServer s, String token, String array) {
        List<String> out = new ArrayList<>();
        for (JsonNode task : s.get("/api/v1/jobs/" + array + "/tasks", token).body().path("taskPage")) out.add(task.path("state").asText());
        return out;
    }
}
