package io.gpupool.server;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpupool.agent.protocol.JobPhase;
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
            assertThat(s.get("/api/v1/config", ADMIN).body().path("policy").path("name").asText()).isEqualTo("fcfs");
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

    @Test
    void a_restart_keeps_the_time_limits_of_tenants_and_jobs() {
        String token;
        String id;
        try (TestServer s = TestServer.start(options())) {
            assertThat(s.post("/api/v1/tenants", ADMIN, Map.of("name", "lim", "defaultTimeLimit", "2:00:00", "maxTimeLimit", "1-00")).status())
                    .isEqualTo(201);
            token = s.post("/api/v1/tenants/lim/tokens", ADMIN, Map.of()).text("token");
            id = s.post("/api/v1/jobs", token, Map.of("numGpus", 1, "timeLimit", 45, "command", List.of("run"))).text("id");
        }
        try (TestServer s = TestServer.start(options())) {
            JsonNode lim = null;
            for (JsonNode t : s.get("/api/v1/tenants", ADMIN).body().path("tenants")) if (t.path("name").asText().equals("lim")) lim = t;
            assertThat(lim).isNotNull();
            assertThat(lim.path("defaultTimeLimitSec").asLong()).isEqualTo(7200);
            assertThat(lim.path("maxTimeLimitSec").asLong()).isEqualTo(86_400);
            assertThat(s.get("/api/v1/jobs/" + id, token).text("timeLimit")).isEqualTo("00:45:00");
            Reply over = s.post("/api/v1/jobs", token, Map.of("numGpus", 1, "timeLimit", "1-00:00:01", "command", List.of("run")));
            assertThat(over.status()).isEqualTo(422);
            assertThat(over.text("field")).isEqualTo("timeLimit");
            String defaulted = s.post("/api/v1/jobs", token, Map.of("numGpus", 1, "command", List.of("run"))).text("id");
            assertThat(s.get("/api/v1/jobs/" + defaulted, token).text("timeLimit")).isEqualTo("02:00:00");
            // an update removes the default (null) and keeps the maximum (absent)
            Reply changed = s.call("PUT", "/api/v1/tenants/lim", ADMIN, java.util.Collections.singletonMap("defaultTimeLimit", null), Map.of());
            assertThat(changed.status()).isEqualTo(200);
            assertThat(changed.body().path("defaultTimeLimitSec").asLong()).isZero();
            assertThat(changed.body().path("maxTimeLimitSec").asLong()).isEqualTo(86_400);
        }
    }

    // ---- the learned run-time predictor ---------------------------------------------------------

    private static final io.gpupool.model.JobSpec LONG_RUN = io.gpupool.model.JobSpec.builder("probe").user("alice").name("train-long").build();

    @Test
    void a_restart_keeps_what_the_run_time_predictor_learned() {
        long learnedMs = 7_200_000;   // two hours; a fresh predictor would answer the default, one hour
        try (TestServer s = TestServer.start(options())) {
            assertThat(s.server.predictor().kind()).isEqualTo("history");
            s.server.pool().onLoop(() -> {
                s.server.predictor().observe(LONG_RUN, learnedMs);
                return null;
            }).join();
            assertThat(predictedMs(s)).isEqualTo(learnedMs);
        }
        try (TestServer s = TestServer.start(options())) {
            assertThat(predictedMs(s)).isEqualTo(learnedMs);
            // a job's own estimate still comes first
            io.gpupool.model.JobSpec estimated = io.gpupool.model.JobSpec.builder("e").user("alice").name("train-long").estimateSec(60).build();
            assertThat(s.server.pool().onLoop(() -> s.server.predictor().predictMs(estimated)).join()).isEqualTo(60_000L);
        }
    }

    private static long predictedMs(TestServer s) {
        return s.server.pool().onLoop(() -> s.server.predictor().predictMs(LONG_RUN)).join();
    }

    @Test
    void after_a_restart_qssf_still_runs_the_job_it_learned_is_short_first() throws Exception {
        // one GPU, on a node whose agent the test plays (TestNode), so the test says when each job ends
        ServerOptions one = options().withCluster(null);
        String token;
        try (TestServer s = TestServer.start(one)) {
            TestNode gpu = node(s);
            token = s.tenantWithToken("team", 1);
            s.call("PUT", "/api/v1/config", ADMIN, Map.of("policy", "qssf"), Map.of());
            String longRun = submit(s, token, "train-long");
            run(gpu, longRun);
            Thread.sleep(1500);
            finish(gpu, longRun);
            String shortRun = submit(s, token, "train-short");
            run(gpu, shortRun);
            finish(gpu, shortRun);
        }
        try (TestServer s = TestServer.start(one)) {
            TestNode gpu = node(s);
            String blocker = submit(s, token, "blocker");
            run(gpu, blocker);
            String longRun = submit(s, token, "train-long");
            String shortRun = submit(s, token, "train-short");
            finish(gpu, blocker);
            // a fresh predictor would know neither name and keep arrival order: train-long first
            eventually("the job learned to be short runs", () -> state(s, token, shortRun).equals("RUNNING"));
            assertThat(state(s, token, longRun)).isEqualTo("PENDING");
        }
    }

    /** A node with one A100 that registers with a fresh join token (the same node name after a restart). */
    private static TestNode node(TestServer s) throws Exception {
        TestNode n = new TestNode(s.base, s.post("/api/v1/agent-tokens", ADMIN, Map.of()).text("token"), "restart-gpu", "1xA100-80GB");
        n.register();
        return n;
    }

    /** The node is handed the job and reports it started. */
    private static void run(TestNode n, String id) throws Exception {
        n.launch(id);
        n.report(n.status(id, 1, JobPhase.RUNNING, null));
    }

    private static String submit(TestServer s, String token, String name) {
        Reply r = s.post("/api/v1/jobs", token, Map.of("name", name, "user", "alice", "numGpus", 1, "command", List.of("run", name)));
        assertThat(r.status()).as(r.body().toString()).isEqualTo(201);
        return r.text("id");
    }

    private static String state(TestServer s, String token, String id) {
        return s.get("/api/v1/jobs/" + id, token).text("state");
    }

    /** The job's node reports it ended successfully (the predictor learns its run time). */
    private static void finish(TestNode n, String id) throws Exception {
        n.report(n.status(id, 1, JobPhase.SUCCEEDED, 0));
    }
}
