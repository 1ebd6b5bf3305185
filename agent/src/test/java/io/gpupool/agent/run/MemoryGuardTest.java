package io.gpupool.agent.run;

import io.gpupool.agent.gpu.GpuBackendException;
import io.gpupool.agent.gpu.NvmlBackend;
import io.gpupool.agent.gpu.NvmlStandin;
import io.gpupool.agent.protocol.GrantedGpu;
import io.gpupool.agent.protocol.JobPhase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;

import static io.gpupool.agent.run.Jobs.await;
import static io.gpupool.agent.run.Jobs.eventually;
import static io.gpupool.agent.run.Jobs.printed;
import static io.gpupool.agent.run.Jobs.sh;
import static io.gpupool.agent.run.Jobs.started;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The memory policy, end to end through the NVML binding: the stand-in library reports a real job
 * process (a child of the job's wrapper) holding more GPU memory than the job was granted.
 */
class MemoryGuardTest {

    static final String GPU0 = "GPU-0a0a0a0a-0000-4000-8000-000000000000";

    @TempDir
    Path work;

    NvmlBackend nvml;
    RecordingListener events = new RecordingListener();
    JobRunner runner;

    @BeforeEach
    void open() throws Throwable {
        NvmlStandin.reset();
        NvmlStandin.clearProcesses(0);
        nvml = NvmlBackend.open(NvmlStandin.library().toString());
    }

    @AfterEach
    void close() throws Exception {
        runner.stopAll("test over", Duration.ofSeconds(5));
        runner.close();
        nvml.close();
    }

    private RunningJob startJobHolding(RunnerConfig.MemoryPolicy policy, long heldMib) throws Throwable {
        runner = new JobRunner(RunnerConfig.defaults(work).withKillGrace(Duration.ofMillis(300)).withMemoryPolicy(policy),
                nvml.discover().gpus(), events);
        RunningJob job = started(runner.start(sh("train", "echo ready; sleep 30; true", new GrantedGpu(GPU0, 100, 4096))));
        // "ready" comes from the command itself, so its shell has replaced the wrapper's fork: a SIGTERM from the
        // kill policy is not lost to the fork's TERM trap (which left the job to the SIGKILL after the grace)
        assertThat(eventually(Duration.ofSeconds(5), () -> printed(job, "ready"))).isTrue();
        // The CUDA process is the job's child, as with a real launcher script.
        assertThat(eventually(Duration.ofSeconds(5), () -> job.handle().children().findAny().isPresent())).isTrue();
        long child = job.handle().children().findFirst().orElseThrow().pid();
        NvmlStandin.addProcess(0, child, heldMib);
        NvmlStandin.addProcess(0, ProcessHandle.current().pid(), 70_000); // not a job's process: ignored
        return job;
    }

    @Test
    void killPolicyStopsAJobOverItsGrantAndSaysWhy() throws Throwable {
        RunningJob job = startJobHolding(RunnerConfig.MemoryPolicy.KILL, 6000);
        runner.enforceMemory(nvml.sample());
        JobEnd end = await(job);
        assertThat(end.phase()).isEqualTo(JobPhase.FAILED);
        assertThat(end.message()).startsWith("killed: exceeded its GPU memory grant on " + GPU0
                + ": its processes hold 6000 MiB, granted 4096 MiB (+512 MiB allowance); exited after SIGTERM");
    }

    @Test
    void warnPolicyReportsOnceAndLeavesTheJobRunning() throws Throwable {
        RunningJob job = startJobHolding(RunnerConfig.MemoryPolicy.WARN, 6000);
        runner.enforceMemory(nvml.sample());
        runner.enforceMemory(nvml.sample());
        assertThat(events.of("warning")).singleElement()
                .satisfies(e -> assertThat(e.message()).contains("its processes hold 6000 MiB, granted 4096 MiB"));
        assertThat(job.handle().isAlive()).isTrue();
    }

    @Test
    void memoryWithinTheAllowanceIsFine() throws Throwable, GpuBackendException {
        RunningJob job = startJobHolding(RunnerConfig.MemoryPolicy.KILL, 4096 + 500);
        runner.enforceMemory(nvml.sample());
        assertThat(events.of("warning")).isEmpty();
        assertThat(job.stopping()).isFalse();
    }
}
