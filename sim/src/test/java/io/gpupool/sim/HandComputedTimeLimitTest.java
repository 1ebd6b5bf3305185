package io.gpupool.sim;

import io.gpupool.engine.SchedulerConfig;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.GpuDevice;
import io.gpupool.model.GpuModel;
import io.gpupool.model.JobSpec;
import io.gpupool.model.NodeSpec;
import io.gpupool.sim.metrics.JobOutcome;
import io.gpupool.sim.metrics.ResultFormat;
import io.gpupool.sim.metrics.SimulationResult;
import io.gpupool.sim.trace.Trace;
import io.gpupool.sim.trace.TraceContext;
import io.gpupool.sim.trace.TraceFile;
import io.gpupool.sim.trace.TraceFormats;
import io.gpupool.sim.trace.TraceJob;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Time limits in the simulator, worked out by hand: a job still running at its limit ends there as timed out, and
 * backfill takes the limit as the upper bound of a job's run time. Times are seconds; each expectation is
 * "id start finish [TIMEOUT]".
 */
class HandComputedTimeLimitTest {
    private static final GpuModel A100 = new GpuModel("A100-80GB", "A100", 81920, 312, 312, 2039, 400, 3, 600, List.of(), "test");

    @TempDir Path dir;

    private static ClusterSpec oneNode(int gpus) {
        List<GpuDevice> devs = IntStream.range(0, gpus).mapToObj(i -> new GpuDevice(i, "GPU-" + i, A100, true)).toList();
        return new ClusterSpec(List.of(new NodeSpec("n0", devs, 96_000, 1 << 20,
                List.of(IntStream.range(0, gpus).boxed().toList()), 1.0, 10, Map.of())));
    }

    private static TraceJob job(String id, long submit, long dur, int gpus, UnaryOperator<JobSpec.Builder> more) {
        return new TraceJob(more.apply(JobSpec.builder(id).submitSec(submit).gpus(gpus)).build(), dur * 1000);
    }

    private record Run(List<String> lines, Map<String, JobOutcome> outcomes, SimulationResult result) {}

    private static Run run(ClusterSpec cluster, String policy, List<TraceJob> trace) {
        Map<String, JobOutcome> byId = new LinkedHashMap<>();
        SimulationResult r = new Simulator(cluster, SchedulerConfig.defaults(policy)).onJobDone(o -> byId.put(o.id(), o)).run(trace);
        List<String> out = new ArrayList<>();
        for (TraceJob t : trace) {
            JobOutcome o = byId.get(t.spec().id());
            out.add(o.id() + " " + o.firstStartMs() / 1000 + " " + o.finishMs() / 1000 + (o.timedOut() ? " TIMEOUT" : ""));
        }
        return new Run(out, byId, r);
    }

    @Test
    void aJobStillRunningAtItsLimitEndsThereAsTimedOut() {
        // one GPU. A would run 100 s but its limit is 60 s: it ends at 60 and B (10 s) runs 60..70. C ends exactly at its
        // limit (50 s of 50): that is a normal end
        Run r = run(oneNode(1), "fcfs", List.of(
                job("A", 0, 100, 1, b -> b.timeLimitSec(60)),
                job("B", 10, 10, 1, b -> b),
                job("C", 10, 50, 1, b -> b.timeLimitSec(50))));
        assertThat(r.lines()).containsExactly("A 0 60 TIMEOUT", "B 60 70", "C 70 120");
        assertThat(r.outcomes().get("A").runMs()).as("what it ran, not its trace duration").isEqualTo(60_000);
        assertThat(r.result().timeouts()).isEqualTo(1);
        assertThat(r.result().timeLimited()).isEqualTo(2);
        assertThat(r.result().summary()).containsEntry("timeouts", 1L);
        // slowdowns: A 60/60 (its JCT over what it ran, not over its 100 s), B 60/10, C 110/50
        assertThat(r.result().slowdown().mean()).isCloseTo((1 + 6 + 2.2) / 3, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(ResultFormat.table(List.of(r.result()))).contains("timeouts");
    }

    @Test
    void backfillTakesTheLimitAsTheRunTimeOfAJobWithoutAnEstimate() {
        // 4 GPUs, no estimates (the default prediction is an hour). A (2 GPUs) has a 100 s limit, so B (all 4 GPUs) is
        // reserved from t=100. C (2 GPUs, limit 60 s) ends by 80 <= 100 at the latest: backfilled at 20, and cut at its
        // limit (it would run 500 s). D has no limit: an hour by default, then the median of what ran (60 s: 80 + 60 > 100),
        // so it would delay B and waits for it.
        List<TraceJob> limited = List.of(
                job("A", 0, 100, 2, b -> b.timeLimitSec(100)),
                job("B", 10, 100, 4, b -> b.timeLimitSec(100)),
                job("C", 20, 500, 2, b -> b.timeLimitSec(60)),
                job("D", 20, 200, 1, b -> b));
        assertThat(run(oneNode(4), "fcfs-backfill", limited).lines())
                .containsExactly("A 0 100", "B 100 200", "C 20 80 TIMEOUT", "D 200 400");
        // the same jobs without limits: A is expected to run an hour, so C (an hour too) cannot end before B's
        // reservation and waits; it then runs its whole 500 s
        List<TraceJob> unlimited = List.of(
                job("A", 0, 100, 2, b -> b),
                job("B", 10, 100, 4, b -> b),
                job("C", 20, 500, 2, b -> b),
                job("D", 20, 200, 1, b -> b));
        assertThat(run(oneNode(4), "fcfs-backfill", unlimited).lines())
                .containsExactly("A 0 100", "B 100 200", "C 200 700", "D 200 400");
    }

    @Test
    void theTraceColumnIsOptionalAndATraceWithoutItGivesTheSameReportAsBefore() throws Exception {
        Path with = dir.resolve("with.csv");
        Files.writeString(with, "job_id,submit_time,duration,num_gpus,time_limit\nA,0,100,1,60\nB,10,10,1,\n");
        Path without = dir.resolve("without.csv");
        Files.writeString(without, "job_id,submit_time,duration,num_gpus\nA,0,100,1\nB,10,10,1\n");
        Trace w = TraceFile.open(with, TraceFormats.get("gpupool"), TraceContext.standard(), false);
        Trace wo = TraceFile.open(without, TraceFormats.get("gpupool"), TraceContext.standard(), false);
        SimulationResult rw = new Simulator(oneNode(1), SchedulerConfig.defaults("fcfs")).run(w);
        SimulationResult rwo = new Simulator(oneNode(1), SchedulerConfig.defaults("fcfs")).run(wo);
        assertThat(rw.timeouts()).isEqualTo(1);
        assertThat(rw.summary()).containsEntry("timeouts", 1L).containsEntry("makespan_s", 70.0);
        assertThat(rwo.summary()).doesNotContainKey("timeouts").containsEntry("makespan_s", 110.0);
        assertThat(ResultFormat.table(List.of(rwo))).doesNotContain("timeouts");
        assertThat(ResultFormat.csv(List.of(rwo)).lines().findFirst().orElseThrow()).doesNotContain("timeouts");
    }
}
