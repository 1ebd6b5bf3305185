package io.gpupool.agent.run;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpupool.agent.AgentJson;
import io.gpupool.agent.gpu.FakeGpuBackend;
import io.gpupool.agent.protocol.GpuInfo;
import io.gpupool.agent.protocol.JobKey;
import io.gpupool.agent.protocol.JobLaunch;
import io.gpupool.agent.protocol.JobPhase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static io.gpupool.agent.run.Jobs.await;
import static io.gpupool.agent.run.Jobs.eventually;
import static io.gpupool.agent.run.Jobs.started;
import static org.assertj.core.api.Assertions.assertThat;

/** Real processes stopped by the runner at their time limit: notice file, SIGTERM, grace, SIGKILL, TIMEOUT. */
class TimeLimitTest {

    @TempDir
    Path work;

    List<GpuInfo> gpus = new FakeGpuBackend("1xA100-80GB", "test").discover().gpus();
    RecordingListener events = new RecordingListener();
    JobRunner runner;

    private JobRunner runner(Duration grace) throws Exception {
        return new JobRunner(RunnerConfig.defaults(work).withKillGrace(grace), gpus, events);
    }

    private static JobLaunch limited(String id, String script, long limitMs) {
        return new JobLaunch(id, 3, List.of("sh", "-c", script), Map.of(), null, List.of(), null, null, limitMs);
    }

    @AfterEach
    void close() throws Exception {
        if (runner != null) {
            runner.stopAll("test over", Duration.ofSeconds(5));
            runner.close();
        }
    }

    @Test
    void aJobThatTrapsSigtermReadsTheNoticeAndItsGraceThenEndsAsTimeout() throws Exception {
        runner = runner(Duration.ofSeconds(30)); // a grace no busy machine outlasts: the end must come from the trap
        String script = "trap 'cp \"$GPUPOOL_NOTICE_FILE\" checkpoint.json; echo \"$GPUPOOL_PREEMPT_GRACE $GPUPOOL_ATTEMPT\" > env.txt; exit 0' TERM; "
                + "while :; do sleep 0.05; done";
        long t0 = System.currentTimeMillis();
        RunningJob job = started(runner.start(limited("trapper", script, 1500)));
        JobEnd end = await(job);
        assertThat(end.phase()).isEqualTo(JobPhase.TIMEOUT);
        assertThat(end.exitCode()).as("the trap's exit, not a signal").isEqualTo(0);
        assertThat(end.message()).as("1.5 s, shown rounded up").isEqualTo("timeout: time limit 00:00:02 reached; exited after SIGTERM with code 0");
        assertThat(end.endedAtMs() - job.startedAtMs()).as("not before the limit (file times are coarse)").isGreaterThanOrEqualTo(1450);
        assertThat(end.endedAtMs() - t0).as("long before the grace ran out").isLessThan(20_000);
        JsonNode notice = AgentJson.MAPPER.readTree(job.directory().path().resolve("checkpoint.json").toFile());
        assertThat(notice.path("phase").asText()).isEqualTo("TIMEOUT");
        assertThat(notice.path("reason").asText()).isEqualTo("timeout: time limit 00:00:02 reached");
        assertThat(notice.path("grace_seconds").asLong()).isEqualTo(30);
        assertThat(notice.path("deadline_ms").asLong()).isBetween(job.startedAtMs() + 1500 + 30_000, end.endedAtMs() + 30_000);
        assertThat(Files.readString(job.directory().path().resolve("env.txt")).trim()).isEqualTo("30 3");
        assertThat(events.endOf(new JobKey("trapper", 3)).phase()).isEqualTo(JobPhase.TIMEOUT);
    }

    @Test
    void aJobThatIgnoresSigtermIsKilledAfterTheGrace() throws Exception {
        runner = runner(Duration.ofMillis(700));
        RunningJob job = started(runner.start(limited("stubborn", "trap '' TERM; while :; do sleep 0.05; done", 1000)));
        JobEnd end = await(job);
        assertThat(end.phase()).isEqualTo(JobPhase.TIMEOUT);
        assertThat(end.exitCode()).as("killed by SIGKILL").isEqualTo(137);
        assertThat(end.message()).isEqualTo("timeout: time limit 00:00:01 reached; killed with SIGKILL after a grace period of 700 ms");
        assertThat(end.endedAtMs() - job.startedAtMs()).as("limit + grace").isGreaterThanOrEqualTo(1650);
    }

    @Test
    void aJobWithoutALimitIsNotStoppedAndEndsByItself() throws Exception {
        runner = runner(Duration.ofMillis(300));
        RunningJob job = started(runner.start(limited("quick", "sleep 0.3; exit 4", 60_000)));
        JobEnd end = await(job);
        assertThat(end.phase()).as("it ended before its limit").isEqualTo(JobPhase.FAILED);
        assertThat(end.exitCode()).isEqualTo(4);
        assertThat(job.directory().path().resolve(StopNotice.FILE)).as("no notice for a job nobody stopped").doesNotExist();
    }

    @Test
    void aRestartedRunnerStillStopsTheJobAtTheLimitCountedFromItsStart() throws Exception {
        runner = runner(Duration.ofMillis(300));
        RunningJob job = started(runner.start(limited("outlives", "while :; do sleep 0.05; done", 2500)));
        long startedAt = job.startedAtMs();
        runner.close(); // the agent goes away for 1.5 s; the job does not
        Thread.sleep(Math.max(0, startedAt + 1500 - System.currentTimeMillis()));
        runner = runner(Duration.ofMillis(300));
        List<RunningJob> adopted = runner.recover();
        assertThat(adopted).extracting(RunningJob::key).containsExactly(new JobKey("outlives", 3));
        JobEnd end = await(adopted.getFirst());
        assertThat(end.phase()).isEqualTo(JobPhase.TIMEOUT);
        assertThat(end.message()).startsWith("timeout: time limit 00:00:03 reached; ");
        // counted from the re-adoption it would end 4 s after the start at the earliest (file times are coarse: 50 ms)
        assertThat(end.endedAtMs() - startedAt).as("from the first start, not the re-adoption").isBetween(2450L, 3900L);
        assertThat(eventually(Duration.ofSeconds(5), () -> !job.handle().isAlive())).isTrue();
    }
}
