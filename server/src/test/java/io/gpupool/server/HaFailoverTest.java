package io.gpupool.server;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * High availability under load: two server replicas on one PostgreSQL and three agents with fake GPUs running real
 * processes; the active replica is killed (SIGKILL) during a stream of 200 submissions a second. Every acknowledged
 * submission is in the store exactly once (under its key, with the id the client was given), no attempt runs twice at
 * once (the jobs' flock oracle), the jobs running at the kill run on under the same attempt on the same node, and
 * submissions are accepted again through the standby, which schedules new work.
 */
class HaFailoverTest {
    @TempDir Path dir;

    @Test
    void kill_9_of_the_active_under_200_submissions_a_second_loses_and_doubles_nothing() throws Exception {
        try (OwnPostgres pg = OwnPostgres.startOrSkip(); FaultRig rig = new FaultRig(dir, "127.0.0.1", 1000, 20_000, 1000, 2000)) {
            String db = pg.createDatabase("ha_failover");
            int portB = FaultRig.freePort();
            String a = rig.base;
            String b = "http://127.0.0.1:" + portB;
            Process pa = rig.startReplica(db, rig.port, ServerOptionsDefaults.LEASE_MS, "a.log");
            rig.startReplica(db, portB, ServerOptionsDefaults.LEASE_MS, "b.log");
            assertThat(HaFencingTest.role(a)).isEqualTo("active");
            assertThat(HaFencingTest.role(b)).isEqualTo("standby");
            rig.servers.add(b);
            rig.setUp("fcfs");
            for (String n : List.of("n1", "n2", "n3")) rig.startAgent(List.of(), n, "2xA100-80GB", a + "," + b, n + ".log");
            FaultRig.waitFor(Duration.ofSeconds(60), "the agents register", () -> rig.nodesIn("ready").size() == 3);
            // whole GPUs: the stream's jobs (a tenth of a GPU each) wait until these end
            List<String> running = rig.submitGated(6, List.of(), "requeue", 1, "g");
            FaultRig.waitFor(Duration.ofSeconds(60), "the jobs run", () -> rig.runningOn(null, running).size() == 6);
            Map<String, String> nodeAtKill = new HashMap<>();
            for (String id : running) nodeAtKill.put(id, rig.firstNode(id));

            SubmissionStream stream = new SubmissionStream(List.of(a, b), rig.team, "s-", List.of("sh", dir.resolve("job.sh").toString(), "0.05"));
            stream.start(200);
            FaultRig.waitFor(Duration.ofSeconds(30), "submissions are acknowledged", () -> stream.acked.size() >= 400);
            long killedAt = System.nanoTime();
            pa.destroyForcibly();   // SIGKILL
            assertThat(pa.waitFor(10, TimeUnit.SECONDS)).isTrue();
            FaultRig.waitFor(Duration.ofSeconds(30), "submissions are accepted through the standby",
                    () -> stream.acked.values().stream().anyMatch(k -> k.atNanos() > killedAt && k.server().equals(b)));
            long firstAfter = stream.acked.values().stream().filter(k -> k.atNanos() > killedAt && k.server().equals(b))
                    .mapToLong(SubmissionStream.Ack::atNanos).min().orElseThrow();
            // a count, not a rate: on a starved machine the new active may accept fewer than the 200 a second sent
            FaultRig.waitFor(Duration.ofSeconds(90), "600 submissions are accepted through the new active",
                    () -> stream.acked.values().stream().filter(k -> k.atNanos() > killedAt && k.server().equals(b)).count() >= 600);
            stream.stop();
            System.out.printf("failover: first submission accepted through the standby %d ms after the kill; %d sent, %d acknowledged%n",
                    TimeUnit.NANOSECONDS.toMillis(firstAfter - killedAt), stream.sent(), stream.acked.size());

            assertThat(stream.failed).as("submissions never acknowledged").isEmpty();
            assertThat(stream.acked).hasSize(stream.sent());
            assertThat(HaFencingTest.role(b)).isEqualTo("active");
            // the standby took over from the copy it followed, completed with the last changes, not from a full read
            assertThat(rig.logContains("b.log", "changed jobs in")).as("the takeover caught up a warm copy").isTrue();
            try (Connection c = DriverManager.getConnection(db)) {
                Map<String, String> stored = new HashMap<>();
                try (PreparedStatement ps = c.prepareStatement("SELECT idem_key, id FROM jobs WHERE idem_key LIKE 's-%'"); ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) assertThat(stored.put(rs.getString(1), rs.getString(2))).as("key " + rs.getString(1) + " stored once").isNull();
                }
                Map<String, String> acked = new HashMap<>();
                stream.acked.values().forEach(k -> acked.put(k.key(), k.id()));
                assertThat(stored).as("every acknowledged job once, with the id its client was given").isEqualTo(acked);
                for (String id : acked.values()) {
                    try (PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM jobs WHERE id = ?")) {
                        ps.setString(1, id);
                        try (ResultSet rs = ps.executeQuery()) {
                            rs.next();
                            assertThat(rs.getInt(1)).as(id).isEqualTo(1);
                        }
                    }
                }
            }

            // the running jobs ran on through the takeover: the same attempt on the same node, re-adopted from the agents' reports
            FaultRig.waitFor(Duration.ofSeconds(30), "the agents report to the new active", () -> rig.nodesIn("ready").size() == 3);
            assertThat(rig.runningOn(null, running)).containsExactlyInAnyOrderElementsOf(running);
            for (String id : running) {
                JsonNode j = rig.job(id);
                assertThat(j.path("attempt").asInt()).as(id).isEqualTo(1);
                assertThat(j.path("attempts")).as(id).hasSize(1);
                assertThat(rig.firstNode(id)).isEqualTo(nodeAtKill.get(id));
            }
            // the new active schedules: once the old jobs end, the stream's jobs start
            rig.openGate("g");
            rig.waitForEnd(running);
            List<String> some = stream.acked.values().stream().map(SubmissionStream.Ack::id).sorted().limit(30).toList();
            FaultRig.waitFor(Duration.ofSeconds(120), "the new active starts the stream's jobs", () -> some.stream().anyMatch(id -> rig.job(id).path("attempt").asInt() > 0));
            for (String id : running) assertThat(rig.state(id)).as(id).isEqualTo("SUCCEEDED");
            rig.checkNeverTwice();
        }
    }

    /** The lease the test runs with: the service's default. */
    private static final class ServerOptionsDefaults {
        static final long LEASE_MS = ServerOptions.DEFAULT_LEASE_TTL_MS;
    }
}
