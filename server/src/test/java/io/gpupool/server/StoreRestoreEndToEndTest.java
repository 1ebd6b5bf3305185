package io.gpupool.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gpupool.store.Database;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.gpupool.server.FaultRig.waitFor;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * An admin restores an older backup of the SQLite store (docs/install.md, section 10), with a real server process and a
 * real agent process (fake GPUs, real jobs). The restored server numbers new jobs on from the backup's last id, so it gives
 * out again the ids of the jobs submitted after the backup, whose attempt directories the agent holds (one of them still
 * running). The new jobs of those ids must run, each once and with its own output and exit code; the old running one must
 * be stopped before the new one of its id starts, and its report must not change the new job; the jobs that the backup
 * holds as queued or running, and that ran after it, must end as they did without running again.
 *
 * <p>Every job holds an exclusive {@code flock} on a file named by its job id while it runs, so an old and a new job of one
 * id that overlapped would be seen (as in {@link FaultRig}'s job script).
 */
class StoreRestoreEndToEndTest {
    private static final long REPORT_MS = 250;
    /** Longer than the restore takes: the agent's lease holds and the old job still runs when the restored server starts. */
    private static final long LOST_MS = 60_000;
    /** The old job ignores SIGTERM: it stops at the SIGKILL, this long after the restored server stopped it. */
    private static final long KILL_GRACE_MS = 10_000;
    private static final long MARGIN_MS = 2_000;
    private static final String NODE = "r-node";
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir Path dir;

    @Test
    void jobs_that_reuse_ids_after_a_restore_run_once_with_their_own_results_and_jobs_the_backup_forgot_end_as_they_did() throws Exception {
        try (FaultRig rig = new FaultRig(dir, "127.0.0.1", REPORT_MS, LOST_MS, KILL_GRACE_MS, MARGIN_MS)) {
            Path script = writeJobScript();
            Process server = rig.startServer("server-1.log");
            rig.setUp("fcfs");
            rig.startAgent(List.of(), NODE, "4xA100-80GB", rig.base, "agent.log");
            waitFor(Duration.ofSeconds(60), "the node is ready", () -> rig.nodesIn("ready").contains(NODE));

            // before the backup: two jobs end; two run until a gate opens and hold half the GPUs, a third waits for room
            String a1 = submit(rig, script, "a1", 0, 1, null, "requeue");
            String a2 = submit(rig, script, "a2", 2, 1, null, "requeue");
            rig.waitForEnd(List.of(a1, a2));
            String g1 = submit(rig, script, "g1", 0, 2, "gate-g", "requeue");
            waitFor(Duration.ofSeconds(30), "g1 runs", () -> !rig.runningOn(NODE, List.of(g1)).isEmpty());
            String g2 = submit(rig, script, "g2", 0, 2, "gate-g", "requeue");
            waitFor(Duration.ofSeconds(30), "g2 runs", () -> !rig.runningOn(NODE, List.of(g2)).isEmpty());
            String p = submit(rig, script, "p", 5, 1, null, "requeue");
            assertThat(rig.state(p)).as("every GPU is taken").isEqualTo("PENDING");

            Path db = dir.resolve("data").resolve(Database.EMBEDDED_FILE);
            Path backup = dir.resolve("backup.db");
            onlineBackup(db, backup); // SQLite's online backup, as sqlite3's .backup takes it

            // after the backup: the gated jobs and the queued one run and end; three more jobs, the last still running
            rig.openGate("g");
            rig.waitForEnd(List.of(g1, g2, p));
            String b1 = submit(rig, script, "b1", 0, 1, null, "requeue");
            String b2 = submit(rig, script, "b2", 3, 1, null, "requeue");
            rig.waitForEnd(List.of(b1, b2));
            String b3 = submit(rig, script, "b3", 0, 1, "hold", "requeue");
            waitFor(Duration.ofSeconds(30), "b3 runs", () -> !rig.runningOn(NODE, List.of(b3)).isEmpty());
            long b3Submitted = rig.job(b3).path("submittedMs").asLong();
            Map<String, JsonNode> before = new LinkedHashMap<>();
            for (String id : List.of(a1, a2, g1, g2, p, b1, b2)) before.put(id, rig.job(id));

            // the admin stops the server, puts the backup in place of the store (without the old WAL) and starts it
            server.destroy();
            assertThat(server.waitFor(30, TimeUnit.SECONDS)).as("the server stops").isTrue();
            Files.deleteIfExists(db.resolveSibling(db.getFileName() + "-wal"));
            Files.deleteIfExists(db.resolveSibling(db.getFileName() + "-shm"));
            Files.copy(backup, db, StandardCopyOption.REPLACE_EXISTING);
            rig.startServer("server-2.log");

            // new jobs: the restored store gives them b1's, b2's and b3's ids again (b3 still runs on the node)
            String c1 = submit(rig, script, "c1", 0, 1, null, "fail");
            String c2 = submit(rig, script, "c2", 4, 1, null, "fail");
            String c3 = submit(rig, script, "c3", 0, 1, null, "fail");
            String c4 = submit(rig, script, "c4", 0, 1, null, "fail");
            assertThat(List.of(c1, c2, c3)).as("ids given out again").containsExactly(b1, b2, b3);
            long c3Submitted = rig.job(c3).path("submittedMs").asLong();
            assertThat(c3Submitted).isNotEqualTo(b3Submitted);
            List<String> all = List.of(a1, a2, g1, g2, p, c1, c2, c3, c4);
            rig.waitForEnd(all, Duration.ofSeconds(120));

            // the new jobs of reused ids ran once each, to their own ends, with their own output
            expectEnd(rig, c1, "SUCCEEDED", 0, "c1");
            expectEnd(rig, c2, "FAILED", 4, "c2");
            expectEnd(rig, c3, "SUCCEEDED", 0, "c3");
            expectEnd(rig, c4, "SUCCEEDED", 0, "c4");

            // the old b3 was stopped (SIGTERM ignored, SIGKILL after the grace) while c3 was already placed; its STOPPED
            // report about attempt 1 of j8 came after that and did not make c3's run lost (c3 would have failed: restart
            // policy "fail"); c3 started only once b3 had ended
            Path oldDir = dir.resolve(NODE).resolve("jobs").resolve(b3 + ".1@" + b3Submitted);
            Path newDir = dir.resolve(NODE).resolve("jobs").resolve(c3 + ".1@" + c3Submitted);
            JsonNode oldEnd = JSON.readTree(oldDir.resolve("outcome.json").toFile());
            assertThat(oldEnd.path("phase").asText()).isEqualTo("STOPPED");
            // (stopped as "no longer wanted" when the restored server's first desired state came before c3 was submitted,
            // or as "no longer known" when it already listed c3)
            assertThat(oldEnd.path("message").asText()).matches("stopped: the server no longer (wants it|knows this job).*")
                    .contains("killed with SIGKILL");
            JsonNode c3Attempt = rig.job(c3).path("attempts").get(0);
            assertThat(c3Attempt.path("assignedMs").asLong()).as("c3 placed on the node before b3's end was reported")
                    .isLessThan(oldEnd.path("ended_at_ms").asLong());
            assertThat(c3Attempt.path("startedMs").asLong()).as("c3 started after b3 ended").isGreaterThanOrEqualTo(oldEnd.path("ended_at_ms").asLong());
            assertThat(rig.job(c3).path("attempts")).hasSize(1);
            assertThat(Files.readString(oldDir.resolve("stdout.log"))).isEqualTo("output of b3\n");
            assertThat(Files.readString(newDir.resolve("stdout.log"))).isEqualTo("output of c3\n");

            // jobs the backup held as running (g1, g2) or queued (p), which ran after it: their recorded ends, not a second run
            expectEnd(rig, g1, "SUCCEEDED", 0, "g1");
            expectEnd(rig, g2, "SUCCEEDED", 0, "g2");
            expectEnd(rig, p, "FAILED", 5, "p");
            for (String id : List.of(a1, a2)) {
                assertThat(rig.job(id).path("state").asText()).isEqualTo(before.get(id).path("state").asText());
                assertThat(rig.job(id).path("exitCode")).isEqualTo(before.get(id).path("exitCode"));
            }

            // the oracle: no job found another of its id running; every job launched once
            assertThat(lines("twice.txt")).as("jobs that found another job of their id running").isEmpty();
            assertThat(lines("launches.txt")).containsExactlyInAnyOrder(
                    "launch " + a1 + " 1 a1", "launch " + a2 + " 1 a2", "launch " + g1 + " 1 g1", "launch " + g2 + " 1 g2",
                    "launch " + p + " 1 p", "launch " + b1 + " 1 b1", "launch " + b2 + " 1 b2", "launch " + b3 + " 1 b3",
                    "launch " + c1 + " 1 c1", "launch " + c2 + " 1 c2", "launch " + c3 + " 1 c3", "launch " + c4 + " 1 c4");
        }
    }

    /**
     * The job script: {@code TAG EXIT [gate-NAME|hold]}. It takes its job id's lock (or records "twice" and exits), records
     * its launch, prints "output of TAG", waits for a gate or (hold) runs on and ignores SIGTERM, and exits with EXIT.
     */
    private Path writeJobScript() throws Exception {
        Path script = dir.resolve("restore-job.sh");
        Files.writeString(script, """
                exec 9>"%1$s/locks/$GPUPOOL_JOB_ID"
                if ! flock -n 9; then echo "twice $GPUPOOL_JOB_ID $GPUPOOL_ATTEMPT $1" >> "%1$s/twice.txt"; exit 99; fi
                echo "launch $GPUPOOL_JOB_ID $GPUPOOL_ATTEMPT $1" >> "%1$s/launches.txt"
                echo "output of $1"
                case "$3" in
                  gate-*) while [ ! -e "%1$s/$3" ]; do sleep 0.1; done ;;
                  hold) trap '' TERM; while true; do sleep 0.1; done ;;
                esac
                exit "$2"
                """.formatted(dir));
        return script;
    }

    private static String submit(FaultRig rig, Path script, String tag, int exit, int gpus, String mode, String restartPolicy) throws Exception {
        Map<String, Object> job = new LinkedHashMap<>();
        job.put("name", tag);
        job.put("numGpus", gpus);
        job.put("restartPolicy", restartPolicy);
        List<String> command = new ArrayList<>(List.of("sh", script.toString(), tag, Integer.toString(exit)));
        if (mode != null) command.add(mode);
        job.put("command", command);
        return rig.call("POST", "/api/v1/jobs", rig.team, JSON.writeValueAsString(job)).path("id").asText();
    }

    private static void expectEnd(FaultRig rig, String id, String state, int exitCode, String tag) {
        JsonNode j = rig.job(id);
        assertThat(j.path("state").asText()).as(id + " (" + tag + ")").isEqualTo(state);
        assertThat(j.path("exitCode").asInt()).as(id + " (" + tag + ") exit code").isEqualTo(exitCode);
        assertThat(j.path("attempt").asInt()).as(id + " (" + tag + ") attempts").isEqualTo(1);
        // the job's own output, also where the agent sent it again to a server that had lost it with the restore
        waitFor(Duration.ofSeconds(20), id + "'s output", () -> rig.call("GET", "/api/v1/jobs/" + id + "/logs", FaultRig.ADMIN, null)
                .path("text").asText().equals("output of " + tag + "\n"));
    }

    private List<String> lines(String file) throws Exception {
        Path f = dir.resolve(file);
        return Files.exists(f) ? Files.readAllLines(f) : List.of();
    }

    /** SQLite's online backup API (what sqlite3's .backup uses) through the JDBC driver, while the server runs. */
    private static void onlineBackup(Path db, Path to) throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db); Statement s = c.createStatement()) {
            s.executeUpdate("backup to " + to);
        }
    }
}
