package io.gpupool.sim;

import io.gpupool.engine.SchedulerConfig;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.GpuDevice;
import io.gpupool.model.GpuModel;
import io.gpupool.model.JobSpec;
import io.gpupool.model.NodeSpec;
import io.gpupool.sim.metrics.JobOutcome;
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
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Arrays with a cap and dependencies in a replay, worked out by hand on one node of 4 GPUs. Times are seconds; each
 * expectation is "id start finish".
 */
class HandComputedWorkflowTest {
    private static final GpuModel A100 = new GpuModel("A100-80GB", "A100", 81920, 312, 312, 2039, 400, 3, 600, List.of(), "test");

    private static ClusterSpec oneNode(int gpus) {
        List<GpuDevice> devs = IntStream.range(0, gpus).mapToObj(i -> new GpuDevice(i, "GPU-" + i, A100, true)).toList();
        return new ClusterSpec(List.of(new NodeSpec("n0", devs, 96_000, 1 << 20,
                List.of(IntStream.range(0, gpus).boxed().toList()), 1.0, 10, Map.of())));
    }

    private static TraceJob job(String id, long submit, long dur, String array, int cap, String... afterOk) {
        return new TraceJob(JobSpec.builder(id).submitSec(submit).gpus(1).build(), dur * 1000,
                new TraceJob.Workflow(array, cap, List.of(afterOk)));
    }

    private static List<String> run(String policy, List<TraceJob> trace, Map<String, String> rejected) {
        Map<String, JobOutcome> byId = new LinkedHashMap<>();
        SimulationResult r = new Simulator(oneNode(4), SchedulerConfig.defaults(policy)).onJobDone(o -> byId.put(o.id(), o)).run(trace);
        if (rejected != null) r.rejectReasons().forEach(rejected::put);
        List<String> out = new ArrayList<>();
        for (TraceJob t : trace) {
            JobOutcome o = byId.get(t.spec().id());
            out.add(o == null ? t.spec().id() + " unfinished" : o.id() + " " + o.firstStartMs() / 1000 + " " + o.finishMs() / 1000);
        }
        return out;
    }

    @Test
    void anArrayCappedAtTwoRunsTwoAtATimeWhileOtherJobsUseTheRestOfTheNode() {
        // 5 tasks of 10 s capped at 2, on 4 GPUs: pairs at 0, 10, 20; a plain job at t=1 takes a free GPU at once
        List<TraceJob> trace = List.of(job("a_0", 0, 10, "a", 2), job("a_1", 0, 10, "a", 2), job("a_2", 0, 10, "a", 2),
                job("a_3", 0, 10, "a", 2), job("a_4", 0, 10, "a", 2), job("x", 1, 5, null, 0));
        for (String policy : List.of("fcfs", "fair-share", "las")) {
            assertThat(run(policy, trace, null)).as(policy).containsExactly("a_0 0 10", "a_1 0 10", "a_2 10 20", "a_3 10 20", "a_4 20 30", "x 1 6");
        }
    }

    @Test
    void aChainRunsInOrderAndADependencyOnAnUnknownJobIsRefused() {
        // b waits for a (0-10), c for b and d (d: 0-30); e names a job never submitted: refused
        List<TraceJob> trace = List.of(job("a", 0, 10, null, 0), job("d", 0, 30, null, 0), job("b", 0, 5, null, 0, "a"),
                job("c", 2, 1, null, 0, "b", "d"), job("e", 3, 1, null, 0, "zz"));
        Map<String, String> rejected = new LinkedHashMap<>();
        assertThat(run("fcfs", trace, rejected)).containsExactly("a 0 10", "d 0 30", "b 10 15", "c 30 31", "e unfinished");
        assertThat(rejected).containsOnlyKeys("e");
        assertThat(rejected.get("e")).contains("afterok:zz");
    }

    @Test
    void theCsvColumnsAreReadAndATraceWithoutThemHasNoWorkflow(@TempDir Path dir) throws Exception {
        Path csv = dir.resolve("t.csv");
        Files.writeString(csv, "job_id,submit_time,duration,num_gpus,array_id,array_cap,depends_on\n"
                + "a,0,10,1,,,\nt0,0,10,1,arr,1,a\nt1,0,10,1,arr,1,a\n");
        Trace t = TraceFile.open(csv, TraceFormats.get("gpupool"), TraceContext.standard(), false);
        List<TraceJob> jobs = new ArrayList<>();
        try (Trace.Cursor c = t.open()) {
            while (c.hasNext()) jobs.add(c.next());
        }
        assertThat(jobs.get(1).workflow()).isEqualTo(new TraceJob.Workflow("arr", 1, List.of("a")));
        assertThat(run("fcfs", jobs, null)).containsExactly("a 0 10", "t0 10 20", "t1 20 30");

        Path old = dir.resolve("old.csv");
        Files.writeString(old, "job_id,submit_time,duration,num_gpus\na,0,10,1\n");
        try (Trace.Cursor c = TraceFile.open(old, TraceFormats.get("gpupool"), TraceContext.standard(), false).open()) {
            assertThat(c.next().workflow()).isNull();
        }
    }
}
