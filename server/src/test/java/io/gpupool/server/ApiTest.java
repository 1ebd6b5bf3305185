package io.gpupool.server;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpupool.server.TestServer.Reply;
import io.gpupool.server.api.RouteTable;
import io.gpupool.server.fuzz.RawHttp;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.gpupool.server.TestServer.ADMIN;
import static io.gpupool.server.TestServer.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The REST API end to end against a real server on loopback with the embedded store. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ApiTest {
    @TempDir static Path dir;
    TestServer s;
    String agent;

    @BeforeAll
    void start() {
        s = TestServer.start(TestServer.options(dir));
        agent = s.post("/api/v1/agent-tokens", ADMIN, Map.of()).text("token");
    }

    @AfterAll
    void stop() {
        s.close();
    }

    private static Map<String, Object> job(int gpus, Object... more) {
        Map<String, Object> m = new java.util.LinkedHashMap<>();
        m.put("name", "t");
        m.put("numGpus", gpus);
        m.put("command", List.of("python", "train.py"));
        for (int i = 0; i < more.length; i += 2) m.put((String) more[i], more[i + 1]);
        return m;
    }

    private String state(String id, String token) {
        return s.get("/api/v1/jobs/" + id, token).text("state");
    }

    @Test
    void a_job_is_acknowledged_durable_runs_on_gpus_and_finishes_when_its_agent_reports() throws Exception {
        TestNode node = new TestNode(s.base, agent, "life-node", "2xL40S");
        node.register();
        String t = s.tenantWithToken("life", 1);
        Reply r = s.post("/api/v1/jobs", t, job(1, "gpuMilli", 500, "gpuMemMib", 20000, "gpuTypes", List.of("l40s"), "env", Map.of("K", "V")));
        assertThat(r.status()).isEqualTo(201);
        assertThat(r.text("state")).isEqualTo("PENDING");
        assertThat(r.text("tenant")).isEqualTo("life");
        assertThat(r.body().path("gpuTypes").get(0).asText()).isEqualTo("L40S");
        assertThat(r.text("restartPolicy")).isEqualTo("requeue");
        String id = r.text("id");
        // acknowledged means committed: the store has it
        assertThat(s.server.store().job(id)).isPresent();

        eventually("it runs", () -> state(id, t).equals("RUNNING"));
        JsonNode running = s.get("/api/v1/jobs/" + id, t).body();
        assertThat(running.path("allocation")).hasSize(1);
        assertThat(running.path("allocation").get(0).path("milli").asInt()).isEqualTo(500);
        assertThat(running.path("allocation").get(0).path("memoryMib").asLong()).isEqualTo(20000);
        assertThat(running.path("allocation").get(0).path("node").asText()).isEqualTo("life-node");
        assertThat(running.path("allocation").get(0).fieldNames()).toIterable()
                .containsExactly("replica", "node", "gpu", "uuid", "milli", "memoryMib", "exclusive");
        // the view is the engine's live one; the start's grants and attempt number reach the store with the iteration's commit
        eventually("its grants are committed", () -> s.server.store().allocation(id).size() == 1);
        assertThat(s.get("/api/v1/jobs/" + id, t).body().path("attempt").asInt()).isEqualTo(1);
        io.gpupool.agent.protocol.JobLaunch launch = node.launch(id);
        assertThat(launch.attempt()).isEqualTo(1);
        assertThat(launch.env()).containsEntry("K", "V");
        assertThat(launch.gpus()).singleElement().satisfies(g -> {
            assertThat(g.milli()).isEqualTo(500);
            assertThat(g.memoryMib()).isEqualTo(20000);
        });

        node.report(node.status(id, 1, io.gpupool.agent.protocol.JobPhase.RUNNING, null));
        io.gpupool.agent.protocol.JobStatusReport end = node.status(id, 1, io.gpupool.agent.protocol.JobPhase.SUCCEEDED, 0);
        assertThat(node.report(end).ackedStatusSeq()).isEqualTo(end.seq());
        assertThat(state(id, t)).isEqualTo("SUCCEEDED");
        assertThat(node.report(end).ackedStatusSeq()).isEqualTo(end.seq()); // the same report again: applied once
        assertThat(s.server.store().allocation(id)).isEmpty();
        assertThat(s.get("/api/v1/jobs/" + id + "/events", t).body().path("events").findValuesAsText("type"))
                .containsExactly("SUBMITTED", "STARTED", "RUNNING", "SUCCEEDED");
        JsonNode attempt = s.get("/api/v1/jobs/" + id, t).body().path("attempts").get(0);
        assertThat(attempt.path("state").asText()).isEqualTo("SUCCEEDED");
        assertThat(attempt.path("pid").asLong()).isEqualTo(4242);
        assertThat(attempt.path("grants").get(0).path("uuid").asText()).isEqualTo(launch.gpus().getFirst().uuid());
        assertThat(attempt.path("grants").get(0).fieldNames()).toIterable()
                .containsExactly("replica", "gpu", "uuid", "milli", "memoryMib", "exclusive"); // the attempt's node is beside them
        assertThat(node.desiredUntil(d -> d.jobs().isEmpty()).jobs()).isEmpty();
    }

    @Test
    void a_retried_submission_with_the_same_idempotency_key_returns_the_same_job() {
        String t = s.tenantWithToken("idem", 1);
        Map<String, String> key = Map.of("Idempotency-Key", "retry-1");
        Reply first = s.call("POST", "/api/v1/jobs", t, job(1), key);
        Reply again = s.call("POST", "/api/v1/jobs", t, job(1), key);
        assertThat(first.status()).isEqualTo(201);
        assertThat(again.status()).isEqualTo(200);
        assertThat(again.text("id")).isEqualTo(first.text("id"));
        Reply other = s.call("POST", "/api/v1/jobs", t, job(2), key);
        assertThat(other.status()).isEqualTo(409);
        assertThat(other.text("field")).isEqualTo("Idempotency-Key");
        assertThat(s.get("/api/v1/jobs?tenant=idem", ADMIN).body().path("jobs")).hasSize(1);
    }

    @Test
    void a_job_that_does_not_fit_waits_with_its_reason_and_can_be_cancelled() {
        String t = s.tenantWithToken("waiter", 1);
        String big = s.post("/api/v1/jobs", t, job(4, "gpuTypes", List.of("T4"))).text("id");
        String second = s.post("/api/v1/jobs", t, job(4, "gpuTypes", List.of("T4"))).text("id");
        eventually("the first runs", () -> state(big, t).equals("RUNNING"));
        eventually("the second has a reason", () -> s.get("/api/v1/jobs/" + second, t).body().path("waitStatus").path("code").asText().equals("UNSCHEDULABLE"));
        // the refusal as data: the capacity filter found no node with 4 free GPUs (the first holds them)
        JsonNode why = s.get("/api/v1/jobs/" + second, t).body().path("waitStatus");
        assertThat(why.path("resource").asText()).isEqualTo("GPUS");
        assertThat(why.path("requested").asLong()).isEqualTo(4);
        assertThat(s.get("/api/v1/jobs/" + second, t).text("waitReason")).isNotBlank();
        assertThat(s.get("/api/v1/jobs/" + second, t).text("state")).isEqualTo("PENDING");
        eventually("the pool's queue shows it", () -> s.get("/api/v1/pool", t).body().path("queue").findValuesAsText("id").contains(second));

        Reply c = s.delete("/api/v1/jobs/" + second, t);
        assertThat(c.status()).isEqualTo(200);
        assertThat(c.text("state")).isEqualTo("CANCELLED");
        assertThat(s.delete("/api/v1/jobs/" + second, t).status()).isEqualTo(409);
        assertThat(s.delete("/api/v1/jobs/" + big, t).text("state")).isEqualTo("CANCELLED");
        assertThat(s.server.store().allocation(big)).isEmpty();
    }

    @Test
    void host_cpu_and_memory_requests_keep_a_job_off_a_node_whose_cpus_are_taken() throws Exception {
        TestNode node = new TestNode(s.base, agent, "host-node", "2xA10");   // 8 CPUs, 64,000 MiB of RAM
        node.register();
        String t = s.tenantWithToken("hosty", 1);
        Reply first = s.post("/api/v1/jobs", t, job(1, "gpuTypes", List.of("A10"), "cpuMilli", 6000, "hostMemMib", 16000));
        assertThat(first.status()).isEqualTo(201);
        assertThat(first.body().path("cpuMilli").asLong()).isEqualTo(6000);
        assertThat(first.body().path("hostMemMib").asLong()).isEqualTo(16000);
        String a = first.text("id");
        eventually("the first runs", () -> state(a, t).equals("RUNNING"));
        // one A10 is still free, but only 2 of the node's 8 CPUs are
        String b = s.post("/api/v1/jobs", t, job(1, "gpuTypes", List.of("A10"), "cpuMilli", 6000)).text("id");
        eventually("the second waits for CPU", () -> s.get("/api/v1/jobs/" + b, t).body().path("waitStatus").path("resource").asText().equals("HOST_CPU"));
        JsonNode cpu = s.get("/api/v1/jobs/" + b, t).body().path("waitStatus");
        assertThat(cpu.path("requested").asLong()).isEqualTo(6000);
        assertThat(cpu.path("free").asLong()).isEqualTo(2000);
        assertThat(state(b, t)).isEqualTo("PENDING");
        assertThat(s.delete("/api/v1/jobs/" + a, t).status()).isEqualTo(200);
        eventually("the second runs once the CPUs are back", () -> state(b, t).equals("RUNNING"));
        assertThat(s.delete("/api/v1/jobs/" + b, t).status()).isEqualTo(200);

        Reply never = s.post("/api/v1/jobs", t, job(1, "gpuTypes", List.of("A10"), "cpuMilli", 9000));
        assertThat(never.status()).as("no A10 node has 9 CPUs").isEqualTo(422);
        assertThat(never.text("field")).isEqualTo("cpuMilli");
        assertThat(s.post("/api/v1/jobs", t, job(1, "cpuMilli", -1)).text("field")).isEqualTo("cpuMilli");
        assertThat(s.post("/api/v1/jobs", t, job(1, "hostMemMib", "lots")).status()).isEqualTo(400);
        assertThat(s.get("/api/v1/jobs/" + b, t).body().path("cpuMilli").asLong()).isEqualTo(6000);
        assertThat(s.get("/api/v1/jobs/" + b, t).body().path("hostMemMib").asLong()).isZero();
    }

    @Test
    void a_pool_without_nodes_refuses_a_job_saying_so_and_takes_it_once_a_node_joins(@TempDir Path other) throws Exception {
        try (TestServer empty = TestServer.start(TestServer.options(other).withCluster(null))) {
            String t = empty.tenantWithToken("early", 1);
            Reply r = empty.post("/api/v1/jobs", t, job(1));
            assertThat(r.status()).isEqualTo(422);
            assertThat(r.body().path("field").isNull()).as("no field of the request is at fault: %s", r.body()).isTrue();
            assertThat(r.text("rule")).contains("the pool has no nodes");
            String joiner = empty.post("/api/v1/agent-tokens", ADMIN, Map.of()).text("token");
            new TestNode(empty.base, joiner, "first-node", "1xT4").register();
            assertThat(empty.post("/api/v1/jobs", t, job(1)).status()).isEqualTo(201);
        }
    }

    @Test
    void bad_requests_get_4xx_naming_the_field_and_rule_and_change_nothing() {
        String t = s.tenantWithToken("bad", 1);
        record Case(Object body, int status, String field) {}
        List<Case> cases = List.of(
                new Case(job(64, "gpuTypes", List.of("T4")), 422, "numGpus"),
                // jobs that can never run on this pool: the field that asks for more than any node has
                new Case(job(1, "gpuMilli", 500, "gpuMemMib", 200_000), 422, "gpuMemMib"),
                new Case(job(16, "gpusPerReplica", 16), 422, "gpusPerReplica"),
                new Case(job(2, "gpuTypes", List.of("T4"), "requireNvlink", true), 422, "requireNvlink"),
                new Case(job(1, "hostMemMib", 60_000_000), 422, "hostMemMib"),
                new Case(job(1, "gpuTypes", List.of("Z80")), 422, "gpuTypes[0]"),
                new Case(Map.of("numGpus", 1), 422, "command"),
                new Case(job(1, "command", List.of()), 422, "command"),
                new Case(Map.of("numGpus", "two", "command", List.of("x")), 400, "numGpus"),
                new Case(Map.of("numGpus", 1.5, "command", List.of("x")), 400, "numGpus"),
                new Case(job(0), 422, "numGpus"),
                new Case(job(2, "gpuMilli", 500), 422, "gpuMilli"),
                new Case(job(1, "gpuMilli", 1001), 422, "gpuMilli"),
                new Case(job(1, "gpuMilli", 0), 422, "gpuMilli"),
                new Case(job(1, "gpuMilli", "half"), 400, "gpuMilli"),
                new Case(job(2, "gpuMemMib", 4096), 422, "gpuMemMib"),
                new Case(job(1, "nmae", "typo"), 400, "nmae"),
                new Case(job(1, "env", Map.of("1BAD", "x")), 422, "env.1BAD"),
                new Case(job(1, "tenant", "other"), 403, null),
                new Case("{\"numGpus\": 1,", 400, "body"),
                new Case("[1,2]", 400, "body"),
                new Case("", 400, "body"));
        for (Case c : cases) {
            Reply r = s.post("/api/v1/jobs", t, c.body());
            assertThat(r.status()).as("%s", c.body()).isEqualTo(c.status());
            assertThat(r.body().path("field").isNull() ? null : r.text("field")).as("%s", c.body()).isEqualTo(c.field());
            assertThat(r.text("rule")).isNotBlank();
        }
        Reply wrongType = s.call("POST", "/api/v1/jobs", t, "numGpus=1", Map.of("Content-Type", "text/plain"));
        assertThat(wrongType.status()).isEqualTo(415);
        // a charset Java does not know was a 500 (the servlet request threw parsing it)
        Reply badCharset = s.call("POST", "/api/v1/jobs", t, job(1), Map.of("Content-Type", "application/json; charset=@@"));
        assertThat(badCharset.status()).isEqualTo(415);
        assertThat(badCharset.text("field")).isEqualTo("Content-Type");
        Reply gzip = s.call("POST", "/api/v1/jobs", t, job(1), Map.of("Content-Encoding", "gzip"));
        assertThat(gzip.status()).isEqualTo(415);
        assertThat(gzip.text("field")).isEqualTo("Content-Encoding");
        assertThat(s.post("/api/v1/tenants", ADMIN, Map.of("name", "bad-limit", "guaranteedGpus", 4, "limitGpus", 2)).text("field")).isEqualTo("guaranteedGpus");
        Reply huge = s.post("/api/v1/jobs", t, job(1, "name", "x".repeat(100_000)));
        assertThat(huge.status()).isEqualTo(413);
        assertThat(s.get("/api/v1/jobs?tenant=bad", ADMIN).body().path("jobs")).isEmpty();
        assertThat(s.get("/api/v1/jobs?limit=0", ADMIN).status()).isEqualTo(422);
        assertThat(s.get("/api/v1/jobs?cursor=abc", ADMIN).status()).isEqualTo(400);
        assertThat(s.get("/api/v1/jobs?state=DONE", ADMIN).text("field")).isEqualTo("state");
        assertThat(s.get("/api/v1/nope", ADMIN).status()).isEqualTo(404);
        assertThat(s.call("PATCH", "/api/v1/jobs", ADMIN, null, Map.of()).status()).isEqualTo(405);
    }

    /** Requests the JDK client will not send: Jetty refuses some before Javalin sees them, with the same JSON errors. */
    @Test
    void errors_from_the_http_layer_have_the_json_error_shape_and_are_4xx() throws Exception {
        RawHttp raw = new RawHttp("127.0.0.1", s.server.port(), 10_000);
        record Case(String request, int status, String field) {}
        String auth = "Authorization: Bearer " + ADMIN + "\r\n";
        List<Case> cases = List.of(
                new Case("GET /api/v1/jobs/%00 HTTP/1.1\r\nHost: x\r\n" + auth, 400, "path"),
                new Case("GET /api/v1/jobs/%C3%28 HTTP/1.1\r\nHost: x\r\n" + auth, 400, "path"),
                new Case("GET /api/v1/jobs?tenant=a&limit=%zz HTTP/1.1\r\nHost: x\r\n" + auth, 400, "limit"), // was: limit ignored, 200
                new Case("GET /api/v1/jobs HTTP/9.9\r\nHost: x\r\n" + auth, 400, "version"), // was Jetty's 505
                new Case("GET /api/v1/jobs HTTP/1.1\r\nHost: x\r\nX-Big: " + "b".repeat(10_000) + "\r\n" + auth, 431, "headers"),
                new Case("PUT /api/v1/config HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n" + auth, 400, "Content-Length"),
                new Case("G(T /api/v1/jobs HTTP/1.1\r\nHost: x\r\n" + auth, 400, null));
        for (Case c : cases) {
            RawHttp.Answer a = raw.exchange((c.request() + "Connection: close\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1), false);
            assertThat(a.status()).as(c.request()).isEqualTo(c.status());
            assertThat(a.header("content-type")).as(c.request()).startsWith("application/json");
            JsonNode e = TestServer.JSON.readTree(a.body());
            assertThat(e.path("status").asInt()).isEqualTo(c.status());
            assertThat(e.path("field").isNull() ? null : e.path("field").asText()).as(c.request()).isEqualTo(c.field());
            assertThat(e.path("message").asText()).isNotBlank();
        }
    }

    @Test
    void jobs_are_listed_in_pages_by_tenant_and_state() {
        String t = s.tenantWithToken("pages", 1);
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 7; i++) ids.add(s.post("/api/v1/jobs", t, job(8, "priority", i)).text("id"));
        s.delete("/api/v1/jobs/" + ids.get(6), t);
        Reply p1 = s.get("/api/v1/jobs?limit=3", t);
        assertThat(p1.body().path("jobs").findValuesAsText("id")).containsExactlyElementsOf(ids.subList(0, 3));
        Reply p2 = s.get("/api/v1/jobs?limit=3&cursor=" + p1.text("nextCursor"), t);
        assertThat(p2.body().path("jobs").findValuesAsText("id")).containsExactlyElementsOf(ids.subList(3, 6));
        assertThat(s.get("/api/v1/jobs?state=cancelled", t).body().path("jobs").findValuesAsText("id")).containsExactly(ids.get(6));
        ids.subList(0, 6).forEach(id -> s.delete("/api/v1/jobs/" + id, t));
    }

    @Test
    void an_agent_registers_its_node_gets_its_jobs_and_its_telemetry_and_output_reach_the_api() throws Exception {
        TestNode node = new TestNode(s.base, agent, "agent-node-1", "2xH100-80GB");
        io.gpupool.agent.protocol.Registration reg = node.register();
        assertThat(reg.nodeId()).isEqualTo("agent-node-1");
        assertThat(reg.nodeToken()).startsWith("gp_");
        assertThat(s.get("/api/v1/whoami", reg.nodeToken()).text("role")).isEqualTo("node");
        TestNode impostor = new TestNode(s.base, agent, "agent-node-1", "1xT4");
        assertThatThrownBy(impostor::register).hasMessageContaining("HTTP 409").hasMessageContaining("other GPUs");

        String t = s.tenantWithToken("h100", 1);
        String id = s.post("/api/v1/jobs", t, job(2, "gpuTypes", List.of("H100-80GB"))).text("id");
        io.gpupool.agent.protocol.JobLaunch a = node.launch(id);
        assertThat(a.command().getFirst()).isEqualTo("python");
        assertThat(a.gpus()).extracting(io.gpupool.agent.protocol.GrantedGpu::uuid).containsExactlyInAnyOrder(node.uuid(0), node.uuid(1));
        assertThat(a.gpus()).allMatch(io.gpupool.agent.protocol.GrantedGpu::whole);

        byte[] out = "epoch 1\nepoch 2\n".getBytes(StandardCharsets.UTF_8);
        node.report(List.of(), List.of(new io.gpupool.agent.protocol.LogChunk(id, 1, io.gpupool.agent.protocol.LogStream.STDOUT, 0, out, false)),
                List.of(new io.gpupool.agent.protocol.GpuSample(0, node.uuid(0), 87, 70000L, 81559L, 71, 612.0, List.of(), null)), 0);
        // the DCGM gauges read the telemetry at once, the pool's gauges the pool snapshot, which the engine loop publishes
        // after its round: wait for both
        eventually("metrics show the GPU and the pool", () -> {
            String m = s.get("/metrics", null).raw().body();
            return m.contains("Hostname=\"agent-node-1\"") && m.contains("gpupool_gpus_allocated{model=\"H100-80GB\"} 2.0");
        });
        String metrics = s.get("/metrics", null).raw().body();
        assertThat(metrics).containsPattern("DCGM_FI_DEV_GPU_UTIL\\{Hostname=\"agent-node-1\",UUID=\"" + node.uuid(0) + "\",device=\"nvidia0\",gpu=\"0\",modelName=\"[^\"]+\"} 87.0");
        assertThat(metrics).contains("DCGM_FI_DEV_FB_USED{Hostname=\"agent-node-1\",UUID=\"" + node.uuid(0) + "\"");
        assertThat(metrics).contains("DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_FB_FREE");
        assertThat(metrics).contains("gpupool_scheduler_round_seconds_bucket", "gpupool_scheduler_decisions_total{outcome=\"started\"}",
                "gpupool_queue_length{tenant=\"h100\"}", "gpupool_gpus_allocated{model=\"H100-80GB\"} 2.0");
        JsonNode logs = s.get("/api/v1/jobs/" + id + "/logs", t).body();
        assertThat(logs.path("text").asText()).isEqualTo("epoch 1\nepoch 2\n");
        assertThat(logs.path("node").asText()).isEqualTo("agent-node-1");
        assertThat(logs.path("nextOffset").asLong()).isEqualTo(out.length);
        assertThat(logs.path("complete").asBoolean()).isFalse();
        assertThat(s.get("/api/v1/jobs/" + id + "/logs?offset=8", t).body().path("text").asText()).isEqualTo("epoch 2\n");
        assertThat(s.get("/api/v1/jobs/" + id + "/logs?stream=stdin", t).status()).isEqualTo(422);
        s.delete("/api/v1/jobs/" + id, t);
        assertThat(node.desiredUntil(d -> d.jobs().isEmpty()).jobs()).isEmpty(); // cancelled: the agent is told to stop it
    }

    @Test
    void draining_a_node_requeues_its_jobs_and_cordoning_keeps_new_work_away() {
        String t = s.tenantWithToken("drain", 1);
        String id = s.post("/api/v1/jobs", t, job(1, "gpuTypes", List.of("T4"))).text("id");
        eventually("runs on the T4 node", () -> state(id, t).equals("RUNNING"));
        Reply d = s.post("/api/v1/nodes/t4-0000/drain", ADMIN, null);
        assertThat(d.status()).isEqualTo(200);
        assertThat(d.body().path("requeued").toString()).contains(id);
        eventually("it waits", () -> state(id, t).equals("PENDING"));
        assertThat(s.get("/api/v1/jobs/" + id, t).body().path("preemptions").asInt()).isEqualTo(1);
        eventually("the node shows as cordoned", () -> s.get("/api/v1/nodes", t).body().path("nodes").toString().contains("\"cordoned\":true"));
        assertThat(s.post("/api/v1/nodes/t4-0000/uncordon", ADMIN, null).status()).isEqualTo(200);
        eventually("runs again", () -> state(id, t).equals("RUNNING"));
        assertThat(s.post("/api/v1/nodes/nope/cordon", ADMIN, null).status()).isEqualTo(404);
        s.delete("/api/v1/jobs/" + id, t);
    }

    @Test
    void the_scheduler_configuration_is_validated_and_applied_without_restart() {
        Reply bad = s.call("PUT", "/api/v1/config", ADMIN, Map.of("policy", "lottery"), Map.of());
        assertThat(bad.status()).isEqualTo(422);
        assertThat(bad.text("field")).isEqualTo("policy");
        assertThat(s.call("PUT", "/api/v1/config", ADMIN, Map.of("placement", "binpack:x"), Map.of()).text("field")).isEqualTo("placement");
        Reply ok = s.call("PUT", "/api/v1/config", ADMIN, Map.of("policy", "fcfs-backfill", "placement", "spread"), Map.of());
        assertThat(ok.status()).isEqualTo(200);
        assertThat(s.get("/api/v1/config", ADMIN).body().path("policy").path("name").asText()).isEqualTo("fcfs-backfill");
        eventually("snapshot shows it", () -> s.get("/api/v1/pool", ADMIN).text("policy").equals("fcfs-backfill"));
        s.call("PUT", "/api/v1/config", ADMIN, Map.of("policy", "fair-share", "placement", "binpack,topology"), Map.of());
        assertThat(s.call("PUT", "/api/v1/tenants/nope", ADMIN, Map.of("weight", 2), Map.of()).status()).isEqualTo(404);
        assertThat(s.post("/api/v1/tenants", ADMIN, Map.of("name", "Bad Name")).text("field")).isEqualTo("name");
    }

    @Test
    void the_event_stream_delivers_committed_job_changes() throws Exception {
        String t = s.tenantWithToken("sse", 1);
        HttpClient http = HttpClient.newHttpClient();
        HttpRequest req = HttpRequest.newBuilder(URI.create(s.base + "/api/v1/events")).header("Authorization", "Bearer " + t)
                .header("Accept", "text/event-stream").build();
        HttpResponse<InputStream> resp = http.send(req, HttpResponse.BodyHandlers.ofInputStream());
        assertThat(resp.statusCode()).isEqualTo(200);
        assertThat(resp.headers().firstValue("Content-Type").orElse("")).startsWith("text/event-stream");
        CompletableFuture<String> seen = CompletableFuture.supplyAsync(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(resp.body(), StandardCharsets.UTF_8))) {
                String line;
                String event = null;
                while ((line = r.readLine()) != null) {
                    if (line.startsWith("event:")) event = line.substring(6).trim();
                    if (line.startsWith("data:") && "job".equals(event) && line.contains("\"SUBMITTED\"")) return line;
                }
                return null;
            } catch (Exception e) {
                return null;
            }
        });
        String id = s.post("/api/v1/jobs", t, job(1)).text("id");
        assertThat(seen.get(10, TimeUnit.SECONDS)).contains("\"jobId\":\"" + id + "\"");
        s.delete("/api/v1/jobs/" + id, t);
    }

    @Test
    void every_route_is_in_the_openapi_document_and_health_endpoints_answer() {
        JsonNode doc = s.get("/openapi.json", null).body();
        assertThat(doc.path("openapi").asText()).startsWith("3.");
        Set<String> documented = new HashSet<>();
        doc.path("paths").fields().forEachRemaining(p -> p.getValue().fieldNames().forEachRemaining(m -> documented.add(m + " " + p.getKey())));
        Set<String> served = new HashSet<>();
        for (RouteTable.Route r : s.server.api().routes().all()) served.add(r.method() + " " + r.path());
        assertThat(documented).isEqualTo(served);
        assertThat(s.get("/healthz", null).status()).isEqualTo(200);
        assertThat(s.get("/readyz", null).status()).isEqualTo(200);
        assertThat(s.get("/", null).raw().body()).contains("<title>gpupool</title>");
    }

}
