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
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static io.gpupool.server.TestServer.ADMIN;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 19, must show 1 (time limits): a server and a real node agent (fake GPUs) run real processes with {@code timeLimit}.
 * A job over its limit gets the notice file and SIGTERM, then SIGKILL after the agent's grace, and ends as TIMEOUT: one
 * that traps SIGTERM writes its checkpoint (with what the notice and its environment told it) and exits in the grace;
 * one that ignores SIGTERM is killed when the grace runs out; one whose agent restarts while it runs is still stopped at
 * its limit, counted from its start. The tenant's maximum refuses a longer limit at submission, its default fills in a
 * job without one. A drained (preempted) job gets the same notice, and its next attempt its number.
 */
class TimeLimitEndToEndTest {
    private static final long GRACE_MS = 3000;

    @TempDir Path dir;

    @Test
    void jobs_over_their_time_limit_get_the_notice_sigterm_and_the_grace_then_end_as_timeout() throws Exception {
        ServerOptions o = TestServer.options(dir.resolve("server")).withCluster(null).withPolicy("fcfs-backfill")
                .withAgents(new AgentSettings(200, 10_000));
        Path work = dir.resolve("node");
        Path out = Files.createDirectories(dir.resolve("out"));
        NodeAgent agent = null;
        try (TestServer s = TestServer.start(o)) {
            String join = s.post("/api/v1/agent-tokens", ADMIN, Map.of()).text("token");
            agent = start(s, join, work);
            TestServer.eventually("the node is ready", () -> s.get("/api/v1/nodes", ADMIN).body().path("nodes").findValuesAsText("state").contains("ready"));
            assertThat(s.post("/api/v1/tenants", ADMIN, Map.of("name", "lim", "defaultTimeLimit", 30, "maxTimeLimit", "1:00:00")).status()).isEqualTo(201);
            String team = s.post("/api/v1/tenants/lim/tokens", ADMIN, Map.of()).text("token");

            // the tenant's maximum and the format are checked at submission, naming the field; nothing is queued
            TestServer.Reply over = s.post("/api/v1/jobs", team, job("1-00:00:00", "true"));
            assertThat(over.status()).isEqualTo(422);
            assertThat(over.text("field")).isEqualTo("timeLimit");
            assertThat(over.text("rule")).isEqualTo("1-00:00:00 is over tenant 'lim''s maximum time limit of 01:00:00");
            TestServer.Reply bad = s.post("/api/v1/jobs", team, job("1:75:00", "true"));
            assertThat(bad.status()).isEqualTo(422);
            assertThat(bad.text("field")).isEqualTo("timeLimit");
            assertThat(s.post("/api/v1/tenants", ADMIN, Map.of("name", "odd", "defaultTimeLimit", "2:00:00", "maxTimeLimit", 60)).text("field"))
                    .isEqualTo("defaultTimeLimit");
            // a job without a limit gets the tenant's default (30 minutes), kept in its stored request
            Map<String, Object> plain = new HashMap<>(job(null, "true"));
            plain.remove("timeLimit");
            String defaulted = s.post("/api/v1/jobs", team, plain).text("id");
            assertThat(s.get("/api/v1/jobs/" + defaulted, team).body().path("timeLimit").asText()).isEqualTo("00:30:00");

            // traps SIGTERM: writes its checkpoint with the notice and its environment, then exits within the grace
            String trapper = s.post("/api/v1/jobs", team, job("0:02", "trap 'cp \"$GPUPOOL_NOTICE_FILE\" " + out + "/notice.json; "
                    + "echo \"grace=$GPUPOOL_PREEMPT_GRACE attempt=$GPUPOOL_ATTEMPT\" > " + out + "/checkpoint.txt; exit 0' TERM; "
                    + "echo started; while :; do sleep 0.1; done")).text("id");
            // ignores SIGTERM: killed when the grace runs out
            String stubborn = s.post("/api/v1/jobs", team, job("0:02", "trap '' TERM; echo started; while :; do sleep 0.1; done")).text("id");
            JsonNode t = ended(s, team, trapper);
            assertThat(t.path("state").asText()).isEqualTo("TIMEOUT");
            assertThat(t.path("exitCode").asInt()).isZero();
            assertThat(t.path("message").asText()).endsWith("timeout: time limit 00:00:02 reached; exited after SIGTERM with code 0");
            JsonNode ta = t.path("attempts").get(0);
            assertThat(ta.path("state").asText()).isEqualTo("TIMEOUT");
            assertThat(ta.path("endedMs").asLong() - ta.path("startedMs").asLong()).as("ended in the grace").isBetween(1950L, 2000 + GRACE_MS - 1);
            assertThat(Files.readString(out.resolve("checkpoint.txt")).trim()).isEqualTo("grace=3 attempt=1");
            JsonNode notice = TestServer.JSON.readTree(out.resolve("notice.json").toFile());
            assertThat(notice.path("phase").asText()).isEqualTo("TIMEOUT");
            assertThat(notice.path("reason").asText()).isEqualTo("timeout: time limit 00:00:02 reached");
            assertThat(notice.path("grace_seconds").asLong()).isEqualTo(3);
            assertThat(notice.path("deadline_ms").asLong() - ta.path("startedMs").asLong()).as("limit + grace").isBetween(4950L, 6000L);

            JsonNode st = ended(s, team, stubborn);
            assertThat(st.path("state").asText()).isEqualTo("TIMEOUT");
            assertThat(st.path("exitCode").asInt()).as("SIGKILL").isEqualTo(137);
            assertThat(st.path("message").asText()).endsWith("timeout: time limit 00:00:02 reached; killed with SIGKILL after a grace period of 3 s");
            JsonNode sa = st.path("attempts").get(0);
            assertThat(sa.path("endedMs").asLong() - sa.path("startedMs").asLong()).as("limit + grace").isGreaterThanOrEqualTo(1950 + GRACE_MS);

            // the agent restarts while a limited job runs: the new agent process stops it at the limit from its start
            String outlives = s.post("/api/v1/jobs", team, job("0:04", "echo started; while :; do sleep 0.1; done")).text("id");
            TestServer.eventually(Duration.ofSeconds(30), "the job runs", () -> logs(s, team, outlives).contains("started"));
            agent.close(); // the job keeps running
            agent = start(s, join, work);
            JsonNode ol = ended(s, team, outlives);
            assertThat(ol.path("state").asText()).isEqualTo("TIMEOUT");
            assertThat(ol.path("attempt").asInt()).as("never requeued").isEqualTo(1);
            JsonNode oa = ol.path("attempts").get(0);
            assertThat(oa.path("endedMs").asLong() - oa.path("startedMs").asLong()).isBetween(3950L, 4000 + GRACE_MS + 1000);

            // TIMEOUT is a state the API filters on, an event of the job's history and a label of the finished-jobs metric
            assertThat(s.get("/api/v1/jobs?state=TIMEOUT", team).body().path("jobs").findValuesAsText("id")).containsExactlyInAnyOrder(trapper, stubborn, outlives);
            assertThat(s.get("/api/v1/jobs/" + stubborn + "/events", team).body().path("events").findValuesAsText("type")).contains("TIMEOUT");
            assertThat(s.get("/metrics", ADMIN).raw().body()).containsPattern("gpupool_jobs_finished_total\\{state=\"TIMEOUT\",tenant=\"lim\"} 3\\.0");
            assertThat(ended(s, team, defaulted).path("state").asText()).as("under its limit: ends by itself").isEqualTo("SUCCEEDED");
            s.server.pool().checkConsistency().join();
        } finally {
            if (agent != null) agent.closeAndStopJobs("test over", Duration.ofSeconds(5));
        }
    }

    @Test
    void a_drained_job_gets_the_notice_before_its_sigterm_and_its_next_attempt_knows_its_number() throws Exception {
        ServerOptions o = TestServer.options(dir.resolve("server")).withCluster(null).withAgents(new AgentSettings(200, 10_000));
        Path out = Files.createDirectories(dir.resolve("out"));
        NodeAgent agent = null;
        try (TestServer s = TestServer.start(o)) {
            String join = s.post("/api/v1/agent-tokens", ADMIN, Map.of()).text("token");
            agent = start(s, join, dir.resolve("node"));
            TestServer.eventually("the node is ready", () -> s.get("/api/v1/nodes", ADMIN).body().path("nodes").findValuesAsText("state").contains("ready"));
            String team = s.tenantWithToken("ckpt", 1);
            // a training loop: each attempt appends its number; on SIGTERM it keeps the notice as its checkpoint's reason
            String id = s.post("/api/v1/jobs", team, job(null, "trap 'cp \"$GPUPOOL_NOTICE_FILE\" " + out + "/notice-$GPUPOOL_ATTEMPT.json; exit 0' TERM; "
                    + "echo \"attempt $GPUPOOL_ATTEMPT\" >> " + out + "/attempts.txt; while :; do sleep 0.1; done")).text("id");
            TestServer.eventually(Duration.ofSeconds(30), "attempt 1 runs", () -> read(out.resolve("attempts.txt")).equals("attempt 1\n"));
            assertThat(s.post("/api/v1/nodes/limits-1/drain", ADMIN, null).status()).isEqualTo(200);
            TestServer.eventually(Duration.ofSeconds(30), "attempt 1 saw the notice", () -> Files.exists(out.resolve("notice-1.json")));
            JsonNode notice = TestServer.JSON.readTree(out.resolve("notice-1.json").toFile());
            assertThat(notice.path("phase").asText()).isEqualTo("STOPPED");
            assertThat(notice.path("grace_seconds").asLong()).isEqualTo(3);
            assertThat(s.post("/api/v1/nodes/limits-1/uncordon", ADMIN, null).status()).isEqualTo(200);
            TestServer.eventually(Duration.ofSeconds(30), "attempt 2 runs", () -> read(out.resolve("attempts.txt")).equals("attempt 1\nattempt 2\n"));
            JsonNode job = s.get("/api/v1/jobs/" + id, team).body();
            assertThat(job.path("attempt").asInt()).isEqualTo(2);
            assertThat(job.path("attempts").get(0).path("state").asText()).as("attempt 1 exited in its grace").isEqualTo("STOPPED");
            assertThat(job.path("attempts").get(0).path("exitCode").asInt()).isZero();
        } finally {
            if (agent != null) agent.closeAndStopJobs("test over", Duration.ofSeconds(5));
        }
    }

    private static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (java.io.IOException e) {
            return "";
        }
    }

    private static NodeAgent start(TestServer s, String join, Path work) throws Exception {
        return AgentLauncher.start(AgentLauncher.Options.fake(s.base, join, "limits-1", work, "2xA100-80GB")
                .withKillGrace(Duration.ofMillis(GRACE_MS)));
    }

    private static Map<String, Object> job(String limit, String script) {
        Map<String, Object> j = new HashMap<>(Map.of("numGpus", 1, "command", List.of("sh", "-c", script)));
        if (limit != null) j.put("timeLimit", limit);
        return j;
    }

    /** The job once it has ended and its attempt's end is recorded. */
    private static JsonNode ended(TestServer s, String token, String id) {
        TestServer.eventually(Duration.ofSeconds(40), id + " ends", () -> {
            JsonNode j = s.get("/api/v1/jobs/" + id, token).body();
            return !List.of("PENDING", "RUNNING").contains(j.path("state").asText()) && j.path("attempts").size() > 0
                    && j.path("attempts").get(0).path("endedMs").asLong() > 0;
        });
        return s.get("/api/v1/jobs/" + id, token).body();
    }

    private static String logs(TestServer s, String token, String id) {
        return s.get("/api/v1/jobs/" + id + "/logs", token).body().path("text").asText();
    }
}
