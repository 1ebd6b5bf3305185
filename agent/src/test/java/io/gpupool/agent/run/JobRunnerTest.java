package io.gpupool.agent.run;

import io.gpupool.agent.gpu.FakeGpuBackend;
import io.gpupool.agent.protocol.GpuInfo;
import io.gpupool.agent.protocol.GrantedGpu;
import io.gpupool.agent.protocol.JobKey;
import io.gpupool.agent.protocol.JobLaunch;
import io.gpupool.agent.protocol.JobPhase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static io.gpupool.agent.run.Jobs.await;
import static io.gpupool.agent.run.Jobs.eventually;
import static io.gpupool.agent.run.Jobs.printed;
import static io.gpupool.agent.run.Jobs.sh;
import static io.gpupool.agent.run.Jobs.started;
import static org.assertj.core.api.Assertions.assertThat;

/** Real short processes started, watched and stopped by the runner. */
class JobRunnerTest {

    @TempDir
    Path work;

    List<GpuInfo> gpus = new FakeGpuBackend("2xA100-80GB", "test").discover().gpus();
    RecordingListener events = new RecordingListener();
    JobRunner runner;

    @BeforeEach
    void open() throws Exception {
        runner = new JobRunner(RunnerConfig.defaults(work).withKillGrace(Duration.ofMillis(300)), gpus, events);
    }

    @AfterEach
    void close() throws Exception {
        runner.stopAll("test over", Duration.ofSeconds(5));
        runner.close();
    }

    private String stdout(JobKey key) throws Exception {
        return Files.readString(runner.store().find(key).orElseThrow().stdout());
    }

    @Test
    void aJobSeesExactlyItsGrantedGpusByUuid() throws Exception {
        String u0 = gpus.get(0).uuid(), u1 = gpus.get(1).uuid();
        // The job asks for all GPUs itself: the agent's value wins.
        JobLaunch l = new JobLaunch("whole", 0, List.of("sh", "-c", "echo \"$CUDA_VISIBLE_DEVICES|${CUDA_DEVICE_SM_LIMIT-unset}|$GPUPOOL_JOB_ID\""),
                Map.of("CUDA_VISIBLE_DEVICES", "all"), null, List.of(GrantedGpu.whole(u1), GrantedGpu.whole(u0)));
        JobEnd end = await(started(runner.start(l)));
        assertThat(end.phase()).isEqualTo(JobPhase.SUCCEEDED);
        assertThat(stdout(l.key())).isEqualTo(u1 + "," + u0 + "|unset|whole\n");
    }

    @Test
    void aFractionalJobGetsHamiLimitsAndAMemoryFraction() throws Exception {
        String u1 = gpus.get(1).uuid();
        JobLaunch l = sh("frac", "echo \"$CUDA_VISIBLE_DEVICES $CUDA_DEVICE_MEMORY_LIMIT_0 $CUDA_DEVICE_SM_LIMIT $GPUPOOL_MEMORY_FRACTION\"",
                new GrantedGpu(u1, 250, 4096));
        await(started(runner.start(l)));
        assertThat(stdout(l.key())).isEqualTo(u1 + " 4096m 25 0.0500\n");
    }

    @Test
    void aJobWithoutGpusSeesNone() throws Exception {
        JobLaunch l = sh("cpu", "echo \"[${CUDA_VISIBLE_DEVICES-unset}]\"");
        await(started(runner.start(l)));
        assertThat(stdout(l.key())).isEqualTo("[]\n");
    }

    @Test
    void exitCodeTimesAndOutputAreRecorded() throws Exception {
        long before = System.currentTimeMillis();
        RunningJob ok = started(runner.start(sh("ok", "echo out; echo err >&2")));
        RunningJob bad = started(runner.start(sh("bad", "exit 3")));
        RunningJob missing = started(runner.start(new JobLaunch("missing", 0, List.of("no-such-program-gpupool"), Map.of(), null, List.of())));
        JobEnd okEnd = await(ok), badEnd = await(bad), missingEnd = await(missing);

        assertThat(okEnd.phase()).isEqualTo(JobPhase.SUCCEEDED);
        assertThat(okEnd.exitCode()).isZero();
        assertThat(okEnd.startedAtMs()).isBetween(before, okEnd.endedAtMs());
        assertThat(Files.readString(ok.directory().stdout())).isEqualTo("out\n");
        assertThat(Files.readString(ok.directory().stderr())).isEqualTo("err\n");
        assertThat(badEnd.phase()).isEqualTo(JobPhase.FAILED);
        assertThat(badEnd.exitCode()).isEqualTo(3);
        assertThat(missingEnd.exitCode()).isEqualTo(127);
        assertThat(Files.readString(missing.directory().stderr())).contains("no-such-program-gpupool");
        assertThat(bad.directory().outcome()).contains(badEnd);
    }

    @Test
    void stopSendsSigtermToTheProcessGroup() throws Exception {
        runner.close();
        // a grace no busy machine outlasts: the exit code must come from SIGTERM, never from the SIGKILL after it
        runner = new JobRunner(RunnerConfig.defaults(work).withKillGrace(Duration.ofSeconds(60)), gpus, events);
        RunningJob job = started(runner.start(sh("term", "echo ready; sleep 30")));
        // "ready" is printed by the command itself: its shell has replaced the wrapper's fork (which still had the
        // wrapper's TERM trap, so a SIGTERM in that moment would be ignored and the job run its 30 s)
        assertThat(eventually(Duration.ofSeconds(5), () -> printed(job, "ready"))).isTrue();
        runner.stop(job.key(), JobPhase.STOPPED, "stopped: cancelled");
        JobEnd end = await(job);
        assertThat(end.phase()).isEqualTo(JobPhase.STOPPED);
        assertThat(end.exitCode()).isEqualTo(143); // 128 + SIGTERM, written by the wrapper
        assertThat(end.message()).as("the reason it was stopped for").startsWith("stopped: cancelled");
    }

    @Test
    void aJobThatIgnoresSigtermIsKilledAfterTheGracePeriodWithItsWholeTree() throws Exception {
        RunningJob job = started(runner.start(sh("stubborn", "trap '' TERM; sleep 30 & echo $! > bg.pid; sleep 30")));
        Path bgPid = job.directory().path().resolve("bg.pid");
        assertThat(eventually(Duration.ofSeconds(5), () -> Files.exists(bgPid))).isTrue();
        long background = Long.parseLong(Files.readString(bgPid).trim());
        long t0 = System.nanoTime();
        runner.stop(job.key(), JobPhase.STOPPED, "stopped: preempted");
        JobEnd end = await(job);
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
        assertThat(end.phase()).isEqualTo(JobPhase.STOPPED);
        assertThat(end.message()).isEqualTo("stopped: preempted; killed with SIGKILL after a grace period of 300 ms");
        assertThat(eventually(Duration.ofSeconds(5), () -> ProcessHandle.of(background).map(ProcessHandle::isAlive).orElse(false) == false))
                .as("the background process of the job is gone too").isTrue();
    }

    @Test
    void processesLeftBehindByAFinishedJobAreKilled() throws Exception {
        // The subshell exits at once, so the sleep is re-parented away from the job: only its session ties it to the job.
        RunningJob job = started(runner.start(sh("leaky", "(sleep 30 & echo $! > bg.pid); exit 0")));
        JobEnd end = await(job);
        assertThat(end.phase()).isEqualTo(JobPhase.SUCCEEDED);
        long background = Long.parseLong(Files.readString(job.directory().path().resolve("bg.pid")).trim());
        assertThat(eventually(Duration.ofSeconds(5), () -> ProcessHandle.of(background).map(ProcessHandle::isAlive).orElse(false) == false))
                .isTrue();
    }

    @Test
    void anAttemptStartsAtMostOnce() throws Exception {
        JobLaunch l = sh("once", "echo run >> ../../launches.txt");
        RunningJob job = started(runner.start(l));
        assertThat(runner.start(l)).isInstanceOf(JobRunner.StartResult.AlreadyStarted.class);
        await(job);
        assertThat(runner.start(l)).as("after it ended too").isInstanceOf(JobRunner.StartResult.AlreadyStarted.class);
        assertThat(Files.readAllLines(work.resolve("launches.txt"))).containsExactly("run");
        // The next attempt is another matter.
        await(started(runner.start(new JobLaunch("once", 1, l.command(), Map.of(), null, List.of()))));
        assertThat(Files.readAllLines(work.resolve("launches.txt"))).containsExactly("run", "run");
    }

    @Test
    void aJobThatCannotStartIsReportedFailedWithTheReason() {
        JobRunner.StartResult r = runner.start(new JobLaunch("nodir", 0, List.of("true"), Map.of(), "/nonexistent/dir", List.of()));
        assertThat(r).isInstanceOf(JobRunner.StartResult.Failed.class);
        assertThat(((JobRunner.StartResult.Failed) r).reason()).contains("field 'work_dir'", "/nonexistent/dir");
        JobRunner.StartResult g = runner.start(sh("nogpu", "true", GrantedGpu.whole("GPU-not-here")));
        assertThat(((JobRunner.StartResult.Failed) g).reason()).contains("field 'gpus'", "GPU-not-here");
        assertThat(events.endOf(new JobKey("nogpu", 0)).phase()).isEqualTo(JobPhase.FAILED);
        assertThat(runner.start(sh("nogpu", "true"))).isInstanceOf(JobRunner.StartResult.AlreadyStarted.class);
    }

    @Test
    void aRestartedRunnerReadoptsRunningJobsAndReportsThoseThatEndedMeanwhile() throws Exception {
        Path gate = work.resolve("gate");
        RunningJob longJob = started(runner.start(sh("long", "echo started >> ../../launches.txt; while [ ! -e ../../gate ]; do sleep 0.05; done; exit 7")));
        RunningJob shortJob = started(runner.start(sh("short", "while [ ! -e ../../gate2 ]; do sleep 0.05; done; exit 5")));
        RunningJob impostor = started(runner.start(sh("impostor", "sleep 30")));
        long longPid = longJob.pid();

        runner.close(); // the agent goes away; its jobs do not
        Files.createFile(work.resolve("gate2"));
        assertThat(eventually(Duration.ofSeconds(5), () -> !shortJob.handle().isAlive())).isTrue();
        // Point the impostor's record at a live process that is not its wrapper (this JVM): it must not be adopted.
        ProcessSignals.signalGroup(impostor.pid(), ProcessSignals.SIGKILL);
        assertThat(eventually(Duration.ofSeconds(5), () -> !impostor.handle().isAlive())).isTrue();
        Files.writeString(impostor.directory().path().resolve(JobDirectory.PROCESS),
                "{\"pid\":" + ProcessHandle.current().pid() + ",\"start_instant_ms\":null,\"started_at_ms\":0}");

        RecordingListener after = new RecordingListener();
        runner = new JobRunner(RunnerConfig.defaults(work), gpus, after);
        List<RunningJob> adopted = runner.recover();
        assertThat(adopted).extracting(RunningJob::key).containsExactly(new JobKey("long", 0));
        assertThat(adopted.getFirst().pid()).isEqualTo(longPid);
        assertThat(adopted.getFirst().startedByThisAgent()).isFalse();
        JobEnd shortEnd = after.endOf(new JobKey("short", 0));
        assertThat(shortEnd.phase()).isEqualTo(JobPhase.FAILED);
        assertThat(shortEnd.exitCode()).isEqualTo(5);
        assertThat(shortEnd.message()).isEqualTo("exit code 5 (ended while the agent was down)");
        assertThat(after.endOf(new JobKey("impostor", 0)).phase()).isEqualTo(JobPhase.LOST);

        Files.createFile(gate);
        JobEnd longEnd = await(adopted.getFirst());
        assertThat(longEnd.exitCode()).as("read from the wrapper's exit file").isEqualTo(7);
        assertThat(Files.readAllLines(work.resolve("launches.txt"))).as("never relaunched").containsExactly("started");
        assertThat(runner.recover()).as("nothing left to adopt").isEmpty();
    }
}
