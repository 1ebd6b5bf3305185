package io.gpupool.sim;

import io.gpupool.engine.SchedulerConfig;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.GpuDevice;
import io.gpupool.model.GpuModel;
import io.gpupool.model.JobSpec;
import io.gpupool.model.NodeSpec;
import io.gpupool.sim.metrics.JobOutcome;
import io.gpupool.sim.metrics.SimulationResult;
import io.gpupool.sim.trace.TraceJob;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A job whose id is already running is refused, and the running job keeps its place in the replay: its completion
 * (which the replay keeps on the job's entry) still ends it.
 */
class DuplicateJobIdTest {
    private static final GpuModel A100 = new GpuModel("A100-80GB", "A100", 81920, 312, 312, 2039, 400, 3, 600, List.of(), "test");

    @Test
    void theRunningJobStillCompletesWhenItsIdComesAgain() {
        List<GpuDevice> devs = IntStream.range(0, 4).mapToObj(i -> new GpuDevice(i, "GPU-" + i, A100, true)).toList();
        ClusterSpec pool = new ClusterSpec(List.of(new NodeSpec("n0", devs, 96_000, 1 << 20, List.of(List.of(0, 1, 2, 3)), 1.0, 10, Map.of())));
        List<TraceJob> trace = List.of(
                new TraceJob(JobSpec.builder("x").submitSec(0).gpus(2).build(), 100_000),
                new TraceJob(JobSpec.builder("x").submitSec(50).gpus(1).build(), 10_000),
                new TraceJob(JobSpec.builder("y").submitSec(60).gpus(1).build(), 10_000));
        List<JobOutcome> done = new ArrayList<>();
        SimulationResult r = new Simulator(pool, SchedulerConfig.defaults("fcfs")).onJobDone(done::add).run(trace);
        assertThat(r.rejected()).isEqualTo(1);
        assertThat(r.jobs()).isEqualTo(2);
        assertThat(r.unfinished()).isZero();
        assertThat(done).extracting(JobOutcome::id).containsExactly("y", "x");
        assertThat(done.get(1).finishMs()).isEqualTo(100_000);   // the first x: its own 100 s, not the refused one's 10 s
        assertThat(r.rejectReasons().get("x")).contains("already exists");
    }
}
