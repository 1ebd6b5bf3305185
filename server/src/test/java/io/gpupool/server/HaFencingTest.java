package io.gpupool.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * High availability: an active replica paused (SIGSTOP) past its lease is replaced by the standby, and once it runs
 * again (SIGCONT) nothing it does reaches the store: a submission that waited in its socket while it was paused is
 * refused by the fencing token (or never handled, the replica having stepped down first), never acknowledged, and not
 * in the database; the old active exits with the step-down code. Real server processes on a PostgreSQL cluster.
 */
class HaFencingTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long LEASE_MS = 2000;
    @TempDir Path dir;

    @Test
    void a_paused_active_writes_nothing_after_the_takeover_and_steps_down() throws Exception {
        try (OwnPostgres pg = OwnPostgres.startOrSkip(); FaultRig rig = new FaultRig(dir, "127.0.0.1", 1000, 20_000, 1000, 2000)) {
            String db = pg.createDatabase("ha_fencing");
            int portB = FaultRig.freePort();
            String a = rig.base;
            String b = "http://127.0.0.1:" + portB;
            Process pa = rig.startReplica(db, rig.port, LEASE_MS, "a.log");
            assertThat(health(a).path("role").asText()).isEqualTo("active");
            assertThat(health(a).path("epoch").asLong()).isEqualTo(1);
            Process pb = rig.startReplica(db, portB, LEASE_MS, "b.log");
            JsonNode hb = health(b);
            assertThat(hb.path("role").asText()).isEqualTo("standby");
            assertThat(hb.path("active").asText()).isEqualTo(a);
            assertThat(metrics(b)).contains("gpupool_replica_active 0", "gpupool_replica_epoch 0", "gpupool_replica_takeovers_total 0");
            assertThat(metrics(a)).contains("gpupool_replica_active 1", "gpupool_replica_epoch 1");

            // a standby refuses API calls, naming the active replica
            HttpResponse<String> refused = post(b, "/api/v1/jobs", FaultRig.ADMIN, "standby-1", "{}").get(10, TimeUnit.SECONDS);
            assertThat(refused.statusCode()).isEqualTo(503);
            assertThat(refused.headers().firstValue("X-Gpupool-Active")).hasValue(a);
            assertThat(refused.headers().firstValue("Retry-After")).hasValue("1");
            assertThat(JSON.readTree(refused.body()).path("active").asText()).isEqualTo(a);

            rig.servers.add(b);
            rig.setUp("fcfs");
            rig.startAgent(List.of(), "n1", "2xA100-80GB", a + "," + b, "agent.log");
            FaultRig.waitFor(Duration.ofSeconds(60), "the agent registers", () -> rig.nodesIn("ready").contains("n1"));
            List<String> before = rig.submitGated(2, List.of(), "requeue", 1, "g");
            FaultRig.waitFor(Duration.ofSeconds(60), "the jobs run", () -> rig.runningOn("n1", before).size() == 2);

            FaultRig.signal(pa, "STOP");
            // waits in the paused replica's socket until it runs again
            CompletableFuture<HttpResponse<String>> late = post(a, "/api/v1/jobs", rig.team, "late-1", rig.gatedJob("late", "g"));
            FaultRig.waitFor(Duration.ofSeconds(30), "the standby takes over", () -> role(b).equals("active"));
            assertThat(health(b).path("epoch").asLong()).isEqualTo(2);
            assertThat(metrics(b)).contains("gpupool_replica_active 1", "gpupool_replica_epoch 2", "gpupool_replica_takeovers_total 1");
            HttpResponse<String> after = null;
            for (int i = 0; after == null && i < 3; i++) {
                try {
                    after = post(b, "/api/v1/jobs", rig.team, "after-1", rig.gatedJob("after", "g")).get(30, TimeUnit.SECONDS);
                } catch (java.util.concurrent.ExecutionException e) {
                    // a kept-alive connection to the standby's listener, closed at the takeover: sent again, same key
                }
            }
            assertThat(after.statusCode()).isEqualTo(201);
            String afterId = JSON.readTree(after.body()).path("id").asText();

            FaultRig.signal(pa, "CONT");
            assertThat(pa.waitFor(30, TimeUnit.SECONDS)).as("the old active exits").isTrue();
            assertThat(pa.exitValue()).as("its exit code: stepped down").isEqualTo(ReplicatedServer.STEPPED_DOWN);
            assertThat(rig.logContains("a.log", "stepping down")).isTrue();
            HttpResponse<String> lateAnswer = null;
            try {
                lateAnswer = late.get(30, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException e) {
                // the connection closed unanswered: also not an acknowledgment
            }
            if (lateAnswer != null) assertThat(lateAnswer.statusCode()).as("the late submission is not acknowledged").isGreaterThanOrEqualTo(500);

            try (Connection c = DriverManager.getConnection(db)) {
                assertThat(count(c, "SELECT COUNT(*) FROM jobs WHERE idem_key = 'late-1'")).as("the late submission is not in the store").isZero();
                assertThat(count(c, "SELECT COUNT(*) FROM jobs WHERE idem_key = 'after-1'")).isEqualTo(1);
                for (String id : before) assertThat(count(c, "SELECT COUNT(*) FROM jobs WHERE id = '" + id + "'")).as(id).isEqualTo(1);
                assertThat(count(c, "SELECT epoch FROM service_lease WHERE id = 1")).isEqualTo(2);
            }
            assertThat(pb.isAlive()).isTrue();
            // the jobs ran on through the takeover: the same attempt, re-adopted by the new active from its agent's reports
            FaultRig.waitFor(Duration.ofSeconds(30), "the agent reports to the new active", () -> rig.nodesIn("ready").contains("n1"));
            assertThat(rig.runningOn("n1", before)).containsExactlyInAnyOrderElementsOf(before);
            for (String id : before) assertThat(rig.job(id).path("attempt").asInt()).as(id).isEqualTo(1);
            rig.openGate("g");
            // the job submitted through the new active runs too, once a GPU frees: every launch is checked against the store
            List<String> all = new ArrayList<>(before);
            all.add(afterId);
            rig.waitForEnd(all);
            rig.checkInvariants(all);
            assertThat(health(b).path("self").asText()).isEqualTo(b);
        }
    }

    private static long count(Connection c, String sql) throws Exception {
        try (PreparedStatement ps = c.prepareStatement(sql); ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(2)).build();

    private static CompletableFuture<HttpResponse<String>> post(String base, String path, String token, String key, String body) {
        return HTTP.sendAsync(HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(60))
                .header("Authorization", "Bearer " + token).header("Idempotency-Key", key).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    static JsonNode health(String base) throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(base + "/healthz")).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString());
        return JSON.readTree(r.body());
    }

    private static String metrics(String base) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(base + "/metrics")).timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()).body();
    }

    static String role(String base) {
        try {
            return health(base).path("role").asText();
        } catch (Exception e) {
            return "unreachable";
        }
    }
}
