package io.gpupool.sim;

import io.gpupool.engine.policy.FairSharePolicy;
import io.gpupool.engine.policy.LasPolicy;
import io.gpupool.engine.SchedulerConfig;
import io.gpupool.engine.TenantConfig;
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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Small cases worked out by hand: for each policy, the exact start and finish time of every job.
 * Times are seconds; each expectation is "id start finish".
 */
class HandComputedPolicyTest {
    private static final GpuModel A100 = new GpuModel("A100-80GB", "A100", 81920, 312, 312, 2039, 400, 3, 600, List.of(), "test");

    private static ClusterSpec oneNode(int gpus) {
        List<GpuDevice> devs = IntStream.range(0, gpus).mapToObj(i -> new GpuDevice(i, "GPU-" + i, A100, true)).toList();
        return new ClusterSpec(List.of(new NodeSpec("n0", devs, 96_000, 1 << 20,
                List.of(IntStream.range(0, gpus).boxed().toList()), 1.0, 10, Map.of())));
    }

    /** id, submit s, duration s, GPUs, and optional tenant / priority / estimate via the builder. */
    private static TraceJob job(String id, long submit, long dur, int gpus, java.util.function.UnaryOperator<JobSpec.Builder> more) {
        return new TraceJob(more.apply(JobSpec.builder(id).submitSec(submit).gpus(gpus)).build(), dur * 1000);
    }

    private static TraceJob job(String id, long submit, long dur, int gpus) {
        return job(id, submit, dur, gpus, b -> b);
    }

    /** "id start finish" for each job, in trace order. */
    private static List<String> run(ClusterSpec cluster, SchedulerConfig cfg, List<TraceJob> trace) {
        Map<String, JobOutcome> byId = new LinkedHashMap<>();
        new Simulator(cluster, cfg).onJobDone(o -> byId.put(o.id(), o)).run(trace);
        List<String> out = new ArrayList<>();
        for (TraceJob t : trace) {
            JobOutcome o = byId.get(t.spec().id());
            out.add(o == null ? t.spec().id() + " unfinished" : o.id() + " " + o.firstStartMs() / 1000 + " " + o.finishMs() / 1000);
        }
        return out;
    }

    // A holds half the node; B needs all of it; C is short, D is long.
    private static List<TraceJob> headBlocks() {
        return List.of(
                job("A", 0, 100, 2, b -> b.estimateSec(100)),
                job("B", 10, 100, 4, b -> b.estimateSec(100)),
                job("C", 20, 50, 2, b -> b.estimateSec(50)),
                job("D", 20, 200, 1, b -> b.estimateSec(200)));
    }

    @Test
    void fcfsStrictHeadBlocksEverythingBehindIt() {
        assertThat(run(oneNode(4), SchedulerConfig.defaults("fcfs"), headBlocks()))
                .containsExactly("A 0 100", "B 100 200", "C 200 250", "D 200 400");
    }

    @Test
    void fcfsCompletionsAreProcessedBeforeArrivalsAtTheSameInstant() {
        assertThat(run(oneNode(1), SchedulerConfig.defaults("fcfs"), List.of(job("A", 0, 100, 1), job("B", 100, 10, 1), job("C", 100, 10, 1))))
                .containsExactly("A 0 100", "B 100 110", "C 110 120");
    }

    @Test
    void easyBackfillStartsShortJobsThatEndBeforeTheReservation() {
        // B is reserved from t=100 (when A is expected to end) on all 4 GPUs. C ends at 70 <= 100: backfilled.
        // D would run past 100 on a reserved GPU: it waits for B.
        assertThat(run(oneNode(4), SchedulerConfig.defaults("fcfs-backfill"), headBlocks()))
                .containsExactly("A 0 100", "B 100 200", "C 20 70", "D 200 400");
    }

    @Test
    void easyBackfillUsesGpusOutsideTheReservation() {
        // 8 GPUs: A holds 6, B needs 4 (reserved on 4 GPUs from t=100), 2 GPUs are free now and not
        // needed by B's reservation... B's reservation takes 4 of the 8 once A ends, leaving 4 others:
        // the long job L (2 GPUs) starts at once on GPUs B will not use.
        List<TraceJob> trace = List.of(
                job("A", 0, 100, 6, b -> b.estimateSec(100)),
                job("B", 10, 100, 4, b -> b.estimateSec(100)),
                job("L", 20, 1000, 2, b -> b.estimateSec(1000)));
        assertThat(run(oneNode(8), SchedulerConfig.defaults("fcfs-backfill"), trace))
                .containsExactly("A 0 100", "B 100 200", "L 20 1020");
    }

    @Test
    void priorityRunsTheHighestFirstAndAgingLetsOldJobsOvertake() {
        List<TraceJob> trace = List.of(
                job("A", 0, 100, 2),
                job("B", 10, 100, 2, b -> b.priority(0)),
                job("C", 20, 100, 2, b -> b.priority(5)));
        // aging 1 per hour: at t=100 B is at 0.025, C at 5.022: C first
        assertThat(run(oneNode(2), SchedulerConfig.defaults("priority").withPolicyArgs(Map.of("agingPerHour", 1)), trace))
                .containsExactly("A 0 100", "B 200 300", "C 100 200");
        // aging 1 per second: at t=100 B is at 90, C at 5 + 80 = 85: B first
        assertThat(run(oneNode(2), SchedulerConfig.defaults("priority").withPolicyArgs(Map.of("agingPerHour", 3600)), trace))
                .containsExactly("A 0 100", "B 100 200", "C 200 300");
    }

    @Test
    void fairShareAlternatesTenantsWhereFcfsServesTheFirstComer() {
        List<TraceJob> trace = List.of(
                job("a1", 0, 100, 1, b -> b.tenant("a")),
                job("a2", 0, 100, 1, b -> b.tenant("a")),
                job("a3", 0, 100, 1, b -> b.tenant("a")),
                job("b1", 0, 100, 1, b -> b.tenant("b")));
        SchedulerConfig fair = SchedulerConfig.defaults("fair-share").withPolicyArgs(new FairSharePolicy.Args(0));
        assertThat(run(oneNode(2), fair, trace)).containsExactly("a1 0 100", "a2 100 200", "a3 100 200", "b1 0 100");
        assertThat(run(oneNode(2), SchedulerConfig.defaults("fcfs"), trace)).containsExactly("a1 0 100", "a2 0 100", "a3 100 200", "b1 100 200");
    }

    @Test
    void fairShareWeightsGiveTheHeavierTenantMore() {
        // weight 3 vs 1 on 4 GPUs, both with plenty of work at t=0: a gets 3 GPUs, b 1
        List<TraceJob> trace = new ArrayList<>();
        for (int i = 0; i < 4; i++) trace.add(job("a" + i, 0, 100, 1, b -> b.tenant("a")));
        for (int i = 0; i < 4; i++) trace.add(job("b" + i, 0, 100, 1, b -> b.tenant("b")));
        SchedulerConfig cfg = SchedulerConfig.defaults("fair-share").withPolicyArgs(new FairSharePolicy.Args(0))
                .withTenants(Map.of("a", new TenantConfig("a", 3, 0, 0), "b", new TenantConfig("b", 1, 0, 0)));
        assertThat(run(oneNode(4), cfg, trace)).startsWith("a0 0 100", "a1 0 100", "a2 0 100", "a3 100 200", "b0 0 100", "b1 100 200");
    }

    @Test
    void fairShareReclaimsBorrowedGpusByPreemption() {
        // b borrows the whole node while a is idle; a's guarantee of 2 GPUs is reclaimed at t=50
        List<TraceJob> trace = List.of(
                job("b1", 0, 100, 2, b -> b.tenant("b")),
                job("b2", 0, 100, 2, b -> b.tenant("b")),
                job("a1", 50, 100, 2, b -> b.tenant("a")));
        SchedulerConfig cfg = SchedulerConfig.defaults("fair-share").withPolicyArgs(new FairSharePolicy.Args(0))
                .withTenants(Map.of("a", new TenantConfig("a", 1, 2, 0), "b", new TenantConfig("b", 1, 2, 0)));
        // b2 (the later job) is preempted at 50 with 50 s done; it resumes at 150 and needs 50 s more
        assertThat(run(oneNode(4), cfg, trace)).containsExactly("b1 0 100", "b2 0 150", "a1 50 150");
    }

    @Test
    void qssfRunsTheShortestPredictedServiceFirst() {
        List<TraceJob> trace = List.of(
                job("A", 0, 100, 1),
                job("B", 10, 300, 1, b -> b.estimateSec(300)),
                job("C", 20, 50, 1, b -> b.estimateSec(50)));
        assertThat(run(oneNode(1), SchedulerConfig.defaults("qssf"), trace)).containsExactly("A 0 100", "B 150 450", "C 100 150");
    }

    @Test
    void lasDemotesAtTheThresholdAndPreemptsForNewJobs() {
        // threshold 100 GPU-s: A drops to queue 1 at t=100, then B (queue 0) preempts it; A resumes at 200
        List<TraceJob> trace = List.of(job("A", 0, 300, 1), job("B", 50, 100, 1));
        SchedulerConfig cfg = SchedulerConfig.defaults("las").withPolicyArgs(new LasPolicy.Args(List.of(100.0)));
        SimulationResult r = new Simulator(oneNode(1), cfg).run(trace);
        assertThat(run(oneNode(1), cfg, trace)).containsExactly("A 0 400", "B 100 200");
        assertThat(r.preemptions()).isEqualTo(1);
    }

    @Test
    void srtfOraclePreemptsForShorterRemainingTime() {
        List<TraceJob> trace = List.of(job("A", 0, 300, 1), job("B", 100, 50, 1), job("C", 120, 500, 1));
        // at 100 A has 200 s left > 50: B preempts; at 150 A (200 left) beats C (500)
        assertThat(run(oneNode(1), SchedulerConfig.defaults("srtf-oracle"), trace)).containsExactly("A 0 350", "B 100 150", "C 350 850");
    }
}
