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
 * GET /api/v1/history and /api/v1/history/whatif without agents (jobs on nodes without an agent run until cancelled):
 * the CSV of a known set of jobs, who sees what, and bad parameters answered 400/422 naming them, never 500.
 */
class HistoryApiTest {
    @TempDir Path dir;

    @Test
    void the_history_holds_the_finished_jobs_of_the_window_and_a_member_sees_only_its_tenants() {
        try (TestServer s = TestServer.start(TestServer.options(dir).withCluster("1x4:T4").withPolicy("fcfs"))) {
            String ml = s.tenantWithToken("ml", 1);
            String cv = s.tenantWithToken("cv", 1);
            long from = System.currentTimeMillis();
            List<String> ids = new ArrayList<>();
            ids.add(s.post("/api/v1/jobs", ml, Map.of("numGpus", 2, "name", "train, v2", "command", List.of("x"))).text("id"));
            ids.add(s.post("/api/v1/jobs", cv, Map.of("numGpus", 1, "gpuMilli", 500, "gpuMemMib", 4000, "priority", 3, "command", List.of("x"))).text("id"));
            ids.add(s.post("/api/v1/jobs", ml, Map.of("numGpus", 4, "timeLimit", "10", "command", List.of("x"))).text("id"));   // waits: 1.5 GPUs held
            TestServer.eventually("two jobs run", () -> ids.subList(0, 2).stream().allMatch(id -> s.get("/api/v1/jobs/" + id, ADMIN).text("state").equals("RUNNING")));
            String active = s.post("/api/v1/jobs", cv, Map.of("numGpus", 4, "command", List.of("x"))).text("id");   // still queued at the export
            for (String id : ids.subList(0, 2)) assertThat(s.delete("/api/v1/jobs/" + id, ADMIN).status()).isEqualTo(200);
            TestServer.eventually("the 4-GPU job runs", () -> s.get("/api/v1/jobs/" + ids.get(2), ADMIN).text("state").equals("RUNNING"));
            assertThat(s.delete("/api/v1/jobs/" + ids.get(2), ADMIN).status()).isEqualTo(200);
            String neverRan = s.post("/api/v1/jobs", ml, Map.of("numGpus", 1, "command", List.of("x"))).text("id");
            assertThat(s.delete("/api/v1/jobs/" + neverRan, ADMIN).status()).isEqualTo(200);
            String window = "since=" + (from - 1000) + "&until=" + (System.currentTimeMillis() + 60_000);

            JsonNode all = s.get("/api/v1/history?" + window, ADMIN).body();
            assertThat(all.path("jobs").asInt()).isEqualTo(3);
            assertThat(all.path("leftOut").path("neverStarted").asInt()).isEqualTo(1);
            assertThat(all.path("leftOut").path("unfinished").asInt()).isEqualTo(1);
            assertThat(all.path("nodes").findValuesAsText("name")).containsExactly("t4-0000");
            String[] lines = all.path("trace").asText().split("\n");
            assertThat(lines).hasSize(4);
            assertThat(lines[0]).startsWith("job_id,submit_time,duration,num_gpus,gpu_milli,gpu_mem_mib,gpu_type,tenant,user,priority,name,replicas,");
            assertThat(lines[1]).startsWith(ids.get(0) + ",0,").contains(",2,1000,0,,ml,ml,0,\"train, v2\",1,true,false,", ",CANCELLED,").endsWith("@t4-0000:0+1");
            assertThat(lines[2]).startsWith(ids.get(1) + ",").contains(",1,500,4000,,cv,cv,3,,1,true,false,", ",CANCELLED,");
            assertThat(lines[3]).startsWith(ids.get(2) + ",").contains(",4,1000,0,,ml,ml,0,,1,true,false,", ",600,", ",CANCELLED,").endsWith("@t4-0000:0+1+2+3");
            assertThat(s.get("/api/v1/history?format=csv&" + window, ADMIN).raw().body()).isEqualTo(all.path("trace").asText());

            JsonNode own = s.get("/api/v1/history?" + window, cv).body();
            assertThat(own.path("tenant").asText()).isEqualTo("cv");
            assertThat(own.path("jobs").asInt()).isEqualTo(1);
            assertThat(own.path("trace").asText()).doesNotContain(ids.get(0)).doesNotContain(ids.get(2)).doesNotContain(",ml,");
            TestServer.Reply other = s.get("/api/v1/history?tenant=ml&" + window, cv);
            assertThat(other.status()).isEqualTo(403);
            assertThat(s.get("/api/v1/history/whatif?tenant=ml&" + window, cv).status()).isEqualTo(403);
            assertThat(s.get("/api/v1/history?" + window, null).status()).isEqualTo(401);

            JsonNode what = s.get("/api/v1/history/whatif?" + window + "&policy=fcfs,las", ADMIN).body();
            assertThat(what.path("results").findValuesAsText("policy")).containsExactly("recorded (fcfs)", "fcfs", "las");
            assertThat(what.path("results").get(0).path("jobs").asInt()).isEqualTo(3);
            // the 4-GPU job waited for the two others in the record; the replay has it wait the same way
            assertThat(what.path("results").get(0).path("max_wait_s").asDouble()).isPositive();
            cancelled(s, active);
        }
    }

    @Test
    void bad_parameters_are_refused_naming_them() {
        try (TestServer s = TestServer.start(TestServer.options(dir).withCluster("1x4:T4"))) {
            for (String path : List.of("/api/v1/history?since=yesterday", "/api/v1/history/whatif?since=yesterday", "/api/v1/history?until=2026-13-45")) {
                TestServer.Reply r = s.get(path, ADMIN);
                assertThat(r.status()).as(path).isEqualTo(400);
                assertThat(r.text("field")).as(path).isIn("since", "until");
                assertThat(r.text("message")).contains("an age (30d, 12h, 90m, 45s)");
            }
            TestServer.Reply order = s.get("/api/v1/history?since=1d&until=2d", ADMIN);
            assertThat(order.status()).isEqualTo(400);
            assertThat(order.text("message")).contains("must be before until");
            TestServer.Reply format = s.get("/api/v1/history?format=xml", ADMIN);
            assertThat(format.status()).isEqualTo(400);
            assertThat(format.text("field")).isEqualTo("format");
            TestServer.Reply policy = s.get("/api/v1/history/whatif?policy=fcfs,fifo", ADMIN);
            assertThat(policy.status()).isEqualTo(422);
            assertThat(policy.text("field")).isEqualTo("policy");
            assertThat(policy.text("message")).contains("unknown policy 'fifo'");
            // an empty window is no error: the record and the replays of no jobs
            JsonNode empty = s.get("/api/v1/history/whatif?since=1h&policy=fcfs", ADMIN).body();
            assertThat(empty.path("jobs").asInt()).isZero();
            assertThat(empty.path("results").findValuesAsText("policy")).containsExactly("recorded (fair-share)", "fcfs");
        }
    }

    private static void cancelled(TestServer s, String id) {
        assertThat(s.delete("/api/v1/jobs/" + id, ADMIN).status()).isEqualTo(200);
    }
}
