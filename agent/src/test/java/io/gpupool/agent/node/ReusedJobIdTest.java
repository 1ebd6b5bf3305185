package io.gpupool.agent.node;

import io.gpupool.agent.protocol.GrantedGpu;
import io.gpupool.agent.protocol.JobKey;
import io.gpupool.agent.protocol.JobLaunch;
import io.gpupool.agent.protocol.JobPhase;
import io.gpupool.agent.protocol.JobStatusReport;
import io.gpupool.agent.protocol.LogStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The agent's rules for a job id the server gives out again (its store was restored from a backup, and it numbers new
 * jobs on from the backup's last id), against the in-memory server: the same job's attempt is never started again, an
 * attempt of another job with that id and attempt number is, once the earlier one has stopped, and a directory an older
 * agent left (no submit instant) stands for every job of its id and attempt.
 */
class ReusedJobIdTest {

    @TempDir
    Path work;

    final TestAgents agents = new TestAgents();
    final InMemoryServerLink server = agents.server;

    @AfterEach
    void stopEverything() throws Exception {
        agents.close();
    }

    private NodeAgent agent() throws Exception {
        return agents.start(work, "2xA100-80GB", Duration.ofMillis(500));
    }

    /**
     * Attempt 1 of job {@code id} submitted at {@code submittedMs} (null: a launch that does not name it), running
     * {@code script}; it holds the job id's lock while it runs, and records "twice" if another holds it.
     */
    private JobLaunch job(String id, Long submittedMs, String script, NodeAgent a) {
        String locked = "exec 9>../../" + id + ".lock; flock -n 9 || { echo \"twice $GPUPOOL_JOB_ID\" >> ../../twice.txt; exit 99; }; "
                + "echo \"$GPUPOOL_JOB_ID\" >> ../../launches.txt; " + script;
        return new JobLaunch(id, 1, List.of("sh", "-c", locked), Map.of(), null, List.of(GrantedGpu.whole(a.inventory().gpus().getFirst().uuid())))
                .withSubmittedMs(submittedMs);
    }

    private static void tickUntil(NodeAgent a, BooleanSupplier done) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) throw new AssertionError("condition not reached in 15 s");
            a.tick();
            Thread.sleep(20);
        }
    }

    private List<JobStatusReport> statuses(String id, Long submittedMs) {
        return server.statusesOf(id).stream().filter(s -> java.util.Objects.equals(s.submittedMs(), submittedMs)).toList();
    }

    private boolean ended(String id, Long submittedMs) {
        return statuses(id, submittedMs).stream().anyMatch(s -> s.phase().terminal());
    }

    private List<String> lines(String file) throws Exception {
        Path f = work.resolve(file);
        return Files.exists(f) ? Files.readAllLines(f) : List.of();
    }

    @Test
    void theSameJobsAttemptIsNeverStartedAgainAndItsRecordedEndIsReportedToAServerThatListsItAgain() throws Exception {
        NodeAgent a = agent();
        server.want(1, List.of(job("j50", 1000L, "echo ran; exit 3", a)));
        tickUntil(a, () -> ended("j50", 1000L));
        a.tick(); // acknowledged
        assertThat(a.bufferedStatuses()).isZero();
        int before = server.statuses().size();

        // a server restored from a backup taken while j50 was queued places it again, same job, same attempt
        server.want(2, List.of(job("j50", 1000L, "echo ran; exit 3", a)));
        NodeAgent.Tick t = a.tick();
        assertThat(t.applied().started()).isEmpty();
        assertThat(t.applied().waiting()).isEmpty();
        a.tick();
        a.tick();
        assertThat(lines("launches.txt")).as("never started again").containsExactly("j50");
        List<JobStatusReport> again = server.statuses().subList(before, server.statuses().size());
        assertThat(again).as("its end, once for this desired state").singleElement().satisfies(s -> {
            assertThat(s.phase()).isEqualTo(JobPhase.FAILED);
            assertThat(s.exitCode()).isEqualTo(3);
            assertThat(s.submittedMs()).isEqualTo(1000L);
            assertThat(s.message()).isEqualTo("exit code 3");
        });
        assertThat(server.log("j50", 1, 1000L, LogStream.STDOUT)).isEqualTo("ran\n");

        server.want(3, List.of(job("j50", 1000L, "echo ran; exit 3", a))); // still listed in a newer state: once more
        a.tick();
        a.tick();
        assertThat(server.statuses().size()).isEqualTo(before + 2);
        assertThat(lines("launches.txt")).containsExactly("j50");
    }

    @Test
    void anEndTheServerHasNotHeardOfYetIsNotReportedTwice() throws Exception {
        NodeAgent a = agent();
        String g0 = a.inventory().gpus().getFirst().uuid();
        // j8 waits for j7's GPU: j7's end makes the agent apply the same desired state again, while the server is out of reach
        JobLaunch j7 = new JobLaunch("j7", 1, List.of("sleep", "0.3"), Map.of(), null, List.of(GrantedGpu.whole(g0))).withSubmittedMs(1000L);
        JobLaunch j8 = new JobLaunch("j8", 1, List.of("true"), Map.of(), null, List.of(GrantedGpu.whole(g0))).withSubmittedMs(1001L);
        server.want(1, List.of(j7));
        a.tick();
        server.want(2, List.of(j7, j8));
        assertThat(a.tick().applied().waiting()).containsKey(j8.key());
        server.reachable = false;
        tickUntil(a, () -> a.bufferedStatuses() == 3); // j7's end and j8's run wait in the journal
        server.reachable = true;
        server.want(3, List.of()); // the server hears of the ends and lists neither any more
        tickUntil(a, () -> a.bufferedStatuses() == 0);
        a.tick();
        assertThat(statuses("j7", 1000L)).extracting(JobStatusReport::phase).containsExactly(JobPhase.RUNNING, JobPhase.SUCCEEDED);
        assertThat(statuses("j8", 1001L)).extracting(JobStatusReport::phase).containsExactly(JobPhase.RUNNING, JobPhase.SUCCEEDED);
    }

    @Test
    void anotherJobThatReusesTheIdAndAttemptStartsOnceTheEarlierOneHasStopped() throws Exception {
        NodeAgent a = agent();
        // j57 as the server knew it before the restore: it ignores SIGTERM, so it stops only at the SIGKILL
        server.want(1, List.of(job("j57", 1000L, "trap '' TERM; echo old; touch ../../ready; while true; do sleep 0.05; done", a)));
        tickUntil(a, () -> Files.exists(work.resolve("ready")));

        // the restored server gives the id to a new job; it is not the one running
        server.want(2, List.of(job("j57", 2000L, "echo new; exit 4", a)));
        NodeAgent.Tick t = a.tick();
        assertThat(t.applied().stopped()).containsExactly(new JobKey("j57", 1, 1000L));
        assertThat(t.applied().started()).isEmpty();
        assertThat(t.applied().waiting()).containsEntry(new JobKey("j57", 1, 2000L),
                "attempt 1 of an earlier job with this id (submitted at 1970-01-01T00:00:01Z) is still stopping");
        assertThat(server.reports.getLast().running()).isNotEmpty();
        tickUntil(a, () -> ended("j57", 1000L) && ended("j57", 2000L));

        JobStatusReport oldEnd = statuses("j57", 1000L).getLast();
        assertThat(oldEnd.phase()).isEqualTo(JobPhase.STOPPED);
        assertThat(oldEnd.message()).startsWith("stopped: the server no longer knows this job; its id and attempt now name a job submitted at "
                + "1970-01-01T00:00:02Z").endsWith("killed with SIGKILL after a grace period of 500 ms");
        List<JobStatusReport> news = statuses("j57", 2000L);
        assertThat(news).extracting(JobStatusReport::phase).containsExactly(JobPhase.RUNNING, JobPhase.FAILED);
        assertThat(news.getFirst().startedAtMs()).as("the new job started after the old one ended").isGreaterThanOrEqualTo(oldEnd.endedAtMs());
        assertThat(news.getLast().exitCode()).isEqualTo(4);
        assertThat(lines("twice.txt")).isEmpty();
        assertThat(lines("launches.txt")).containsExactly("j57", "j57");
        tickUntil(a, () -> server.log("j57", 1, 2000L, LogStream.STDOUT).equals("new\n") && server.log("j57", 1, 1000L, LogStream.STDOUT).equals("old\n"));
        assertThat(work.resolve("jobs/j57.1@1000/stdout.log")).hasContent("old");
        assertThat(work.resolve("jobs/j57.1@2000/stdout.log")).hasContent("new");

        server.want(3, List.of(job("j57", 2000L, "echo new; exit 4", a)));
        a.tick();
        assertThat(lines("launches.txt")).as("the new job's attempt is never started again either").hasSize(2);
    }

    @Test
    void anOlderAgentsAttemptStandsForEveryJobOfItsIdAndAttempt() throws Exception {
        NodeAgent a = agent();
        // what an agent of the release before started: the launches name no submit instant
        server.want(1, List.of(job("j8", null, "sleep 30", a), job("j9", null, "echo legacy", a)));
        tickUntil(a, () -> ended("j9", null));
        a.tick();
        assertThat(Files.readString(work.resolve("jobs/j9.1/launch.json"))).doesNotContain("submitted");
        a.close();
        agents.remove(a);

        NodeAgent upgraded = agent(); // the upgraded agent re-adopts j8; the server now names every job's instant
        server.want(2, List.of(job("j8", 5000L, "sleep 30", upgraded), job("j9", 6000L, "echo new", upgraded)));
        int before = server.statuses().size();
        NodeAgent.Tick t = upgraded.tick();
        assertThat(t.applied().stopped()).as("j8 may be the same job: it runs on").isEmpty();
        assertThat(t.applied().started()).as("j9's directory may be this job's: never started").isEmpty();
        upgraded.tick();
        assertThat(server.reports.getLast().running()).singleElement().satisfies(r -> {
            assertThat(r.jobId()).isEqualTo("j8");
            assertThat(r.submittedMs()).as("not known").isNull();
        });
        assertThat(server.statuses().subList(before, server.statuses().size()))
                .as("an older agent's end may be another job's: not reported for this one").isEmpty();
        assertThat(lines("launches.txt")).containsExactlyInAnyOrder("j8", "j9");
        assertThat(upgraded.runner().running()).extracting(r -> r.key()).containsExactly(new JobKey("j8", 1));
    }

    @Test
    void outputAcknowledgedWithoutTheSubmitInstantByAnOlderServerIsDoneWith() throws Exception {
        NodeAgent a = agent();
        server.acksWithoutInstant = true;
        server.want(1, List.of(job("j3", 1000L, "echo out", a)));
        tickUntil(a, () -> ended("j3", 1000L) && server.log("j3", 1, 1000L, LogStream.STDOUT).equals("out\n"));
        a.tick();
        a.tick();
        assertThat(server.reports.getLast().logs()).as("nothing sent again").isEmpty();
    }

    @Test
    void logOffsetsKeptByAnOlderAgentAreReadBack() {
        LogShipper.StreamKey old = LogShipper.StreamKey.parse("j#1#2/STDOUT");
        assertThat(old).isEqualTo(new LogShipper.StreamKey(new JobKey("j#1", 2), LogStream.STDOUT));
        LogShipper.StreamKey now = new LogShipper.StreamKey(new JobKey("a@b/c#d", 3, 1733150000000L), LogStream.STDERR);
        assertThat(now.text()).isEqualTo("a@b/c#d#3@1733150000000/STDERR");
        assertThat(LogShipper.StreamKey.parse(now.text())).isEqualTo(now);
    }
}
