package io.gpupool.sim;

import io.gpupool.engine.policy.FairSharePolicy;
import io.gpupool.engine.SchedulerConfig;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.GpuDevice;
import io.gpupool.model.GpuModel;
import io.gpupool.model.JobSpec;
import io.gpupool.model.NodeSpec;
import io.gpupool.sim.metrics.SimulationResult;
import io.gpupool.sim.trace.TraceJob;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * Every metric of the four goals, worked out by hand for small traces (times in seconds, GPUs whole).
 *
 * <p>The main trace, on one node of 4 GPUs: J1 (tenant a, 2 GPUs, 100 s) and J2 (tenant b, 4 GPUs, 100 s)
 * at t=0, J3 (tenant a, 1 GPU, 10 s) at t=50. Strict FCFS: J1 0-100, J2 100-200 (it needs all 4), J3
 * 200-210 (behind J2).
 */
class HandComputedMetricsTest {
    private static final GpuModel A100 = new GpuModel("A100-80GB", "A100", 81920, 312, 312, 2039, 400, 3, 600, List.of(), "test");
    private static final double EPS = 1e-9;

    private static ClusterSpec oneNode(int gpus) {
        List<GpuDevice> devs = IntStream.range(0, gpus).mapToObj(i -> new GpuDevice(i, "GPU-" + i, A100, true)).toList();
        return new ClusterSpec(List.of(new NodeSpec("n0", devs, 96_000, 1 << 20,
                List.of(IntStream.range(0, gpus).boxed().toList()), 1.0, 10, Map.of())));
    }

    private static TraceJob job(String id, long submit, long dur, int gpus, String tenant, UnaryOperator<JobSpec.Builder> more) {
        return new TraceJob(more.apply(JobSpec.builder(id).submitSec(submit).gpus(gpus).tenant(tenant)).build(), dur * 1000);
    }

    private static List<TraceJob> mainTrace(boolean estimates) {
        return List.of(
                job("J1", 0, 100, 2, "a", b -> estimates ? b.estimateSec(100) : b),
                job("J2", 0, 100, 4, "b", b -> estimates ? b.estimateSec(100) : b),
                job("J3", 50, 10, 1, "a", b -> estimates ? b.estimateSec(10) : b));
    }

    @Test
    void fcfsEveryGoalByHand() {
        SimulationResult r = new Simulator(oneNode(4), SchedulerConfig.defaults("fcfs")).run(mainTrace(false));
        assertThat(r.jobs()).isEqualTo(3);
        assertThat(r.totalGpus()).isEqualTo(4);
        // JCT: J1 100, J2 200, J3 160 (nearest rank: p50 = 2nd of 3, p95 = p99 = 3rd)
        assertThat(r.jct().mean()).isCloseTo(460 / 3.0, within(EPS));
        assertThat(r.jct().p50()).isEqualTo(160);
        assertThat(r.jct().p95()).isEqualTo(200);
        assertThat(r.jct().p99()).isEqualTo(200);
        // waiting: J1 0, J2 100, J3 150
        assertThat(r.waiting().mean()).isCloseTo(250 / 3.0, within(EPS));
        assertThat(r.waiting().p95()).isEqualTo(150);
        assertThat(r.waiting().max()).isEqualTo(150);
        // slowdown: 1, 2, 16
        assertThat(r.slowdown().mean()).isCloseTo(19 / 3.0, within(EPS));
        assertThat(r.makespanSec()).isEqualTo(210);
        // 2x100 + 4x100 + 1x10 GPU-s over 4 GPUs x 210 s
        assertThat(r.utilization()).isCloseTo(610 / 840.0, within(EPS));
        // [0,50): J2 (4 GPUs) is the only queued job and the node has 2 idle GPUs: both stranded; from 50 J3 could use them
        assertThat(r.fragmentation()).isCloseTo(2 * 50 / 840.0, within(EPS));
        assertThat(r.preemptions()).isZero();
        assertThat(r.rejected()).isZero();
        assertThat(r.unfinished()).isZero();
    }

    @Test
    void fcfsTimelineByHand() {
        SimulationResult.Timeline t = new Simulator(oneNode(4), SchedulerConfig.defaults("fcfs")).run(mainTrace(false)).timeline();
        // 60 s buckets; the last one (180-240) is averaged over the 30 s the run reached
        assertThat(t.bucketSec()).isEqualTo(60);
        // queued: [0,50) 1, [50,100) 2, [100,200) 1, [200,210) 0
        assertThat(t.queued()).containsExactly(new double[] {70 / 60.0, 100 / 60.0, 1, 20 / 30.0}, within(EPS));
        // GPUs in use: [0,100) 2, [100,200) 4, [200,210) 1
        assertThat(t.usedGpus()).containsExactly(new double[] {2, 160 / 60.0, 4, 90 / 30.0}, within(EPS));
        assertThat(t.fragmentedGpus()).containsExactly(new double[] {100 / 60.0, 0, 0, 0}, within(EPS));
        int a = t.tenants().indexOf("a"), b = t.tenants().indexOf("b");
        assertThat(t.tenantGpus()[a]).containsExactly(new double[] {2, 80 / 60.0, 0, 10 / 30.0}, within(EPS));
        assertThat(t.tenantGpus()[b]).containsExactly(new double[] {0, 80 / 60.0, 4, 80 / 30.0}, within(EPS));
        // fair shares (water-filling over demand): [0,100) a 2, b 2; [100,200) a 1 (J3 asks 1), b 3; [200,210) a 1
        assertThat(t.tenantFairGpus()[a]).containsExactly(new double[] {2, 100 / 60.0, 1, 30 / 30.0}, within(EPS));
        assertThat(t.tenantFairGpus()[b]).containsExactly(new double[] {2, 140 / 60.0, 3, 60 / 30.0}, within(EPS));
    }

    @Test
    void fcfsTenantSharesAndJainByHand() {
        SimulationResult r = new Simulator(oneNode(4), SchedulerConfig.defaults("fcfs")).run(mainTrace(false));
        // contended (something queued) over [0,200): a held 2x100, fair 2x100 + 1x100; b held 4x100, fair 2x100 + 3x100
        SimulationResult.TenantResult a = tenant(r, "a"), b = tenant(r, "b");
        assertThat(a.jobs()).isEqualTo(2);
        assertThat(a.gpuHours()).isCloseTo(210 / 3600.0, within(EPS));
        assertThat(b.gpuHours()).isCloseTo(400 / 3600.0, within(EPS));
        assertThat(a.share()).isCloseTo(210 / 610.0, within(EPS));
        assertThat(a.entitledShare()).isCloseTo(300 / 800.0, within(EPS));
        assertThat(b.entitledShare()).isCloseTo(500 / 800.0, within(EPS));
        assertThat(a.heldVsFair()).isCloseTo(2 / 3.0, within(EPS));
        assertThat(b.heldVsFair()).isCloseTo(4 / 5.0, within(EPS));
        assertThat(a.avgWaitSec()).isCloseTo(75, within(EPS));
        // one 1-hour window: x = (2/3, 4/5); Jain = (22/15)^2 / (2 (4/9 + 16/25)) = 121/122
        assertThat(r.fairness()).hasSize(1);
        assertThat(r.fairness().getFirst().contendedMs()).isEqualTo(200_000);
        assertThat(r.jainFairness()).isCloseTo(121 / 122.0, within(EPS));
    }

    @Test
    void easyBackfillMetricsByHand() {
        // J2 is reserved from 100 (J1's estimate); J3 (estimate 10 s) ends at 60 <= 100 and is backfilled at 50
        SimulationResult r = new Simulator(oneNode(4), SchedulerConfig.defaults("fcfs-backfill")).run(mainTrace(true));
        assertThat(r.jct().mean()).isCloseTo((100 + 200 + 10) / 3.0, within(EPS));
        assertThat(r.waiting().max()).isEqualTo(100);
        assertThat(r.makespanSec()).isEqualTo(200);
        assertThat(r.utilization()).isCloseTo(610 / 800.0, within(EPS));
        // J2 alone in the queue the whole time to 100: 2 idle GPUs stranded, 1 while J3 ran (50-60)
        assertThat(r.fragmentation()).isCloseTo((2 * 50 + 1 * 10 + 2 * 40) / 800.0, within(EPS));
    }

    @Test
    void jainTellsFcfsFromFairShare() {
        // one node of 2 GPUs; a1..a3 and b1 (1 GPU, 100 s) at t=0
        List<TraceJob> trace = List.of(job("a1", 0, 100, 1, "a", b -> b), job("a2", 0, 100, 1, "a", b -> b),
                job("a3", 0, 100, 1, "a", b -> b), job("b1", 0, 100, 1, "b", b -> b));
        // FCFS: a1, a2 first; while a3 and b1 wait, a holds 2 against a fair 1 and b 0 against 1: x = (2, 0), Jain 1/2
        SimulationResult fcfs = new Simulator(oneNode(2), SchedulerConfig.defaults("fcfs")).run(trace);
        assertThat(fcfs.jainFairness()).isCloseTo(0.5, within(EPS));
        // fair share: a1 and b1 first: x = (1, 1), Jain 1
        SimulationResult fair = new Simulator(oneNode(2), SchedulerConfig.defaults("fair-share").withPolicyArgs(new FairSharePolicy.Args(0))).run(trace);
        assertThat(fair.jainFairness()).isCloseTo(1.0, within(EPS));
        // the totals are the same under both: every tenant got all it asked for in the end
        assertThat(tenant(fcfs, "a").gpuHours()).isEqualTo(tenant(fair, "a").gpuHours());
    }

    @Test
    void fairnessWindowsSplitTheRun() {
        // the same trace, 50 s windows: FCFS is unfair in [0,50) and [50,100); nothing waits after
        List<TraceJob> trace = List.of(job("a1", 0, 100, 1, "a", b -> b), job("a2", 0, 100, 1, "a", b -> b),
                job("a3", 0, 100, 1, "a", b -> b), job("b1", 0, 100, 1, "b", b -> b));
        SimulationResult r = new Simulator(oneNode(2), SchedulerConfig.defaults("fcfs")).fairnessWindowMs(50_000).run(trace);
        assertThat(r.fairness()).extracting(w -> w.startMs()).containsExactly(0L, 50_000L);
        assertThat(r.fairness()).allSatisfy(w -> assertThat(w.jain()).isCloseTo(0.5, within(EPS)));
    }

    @Test
    void sharesStrandedByTheirSizeAreFragmentation() {
        // 1 GPU: S1 takes 700 milli for 100 s; S2 asks 500 at t=0 and cannot share the 300 left: stranded until 100
        List<TraceJob> trace = List.of(job("S1", 0, 100, 1, "a", b -> b.milli(700)), job("S2", 0, 100, 1, "a", b -> b.milli(500)));
        SimulationResult r = new Simulator(oneNode(1), SchedulerConfig.defaults("fcfs")).run(trace);
        assertThat(r.makespanSec()).isEqualTo(200);
        assertThat(r.fragmentation()).isCloseTo(0.3 * 100 / 200.0, within(EPS));
        assertThat(r.utilization()).isCloseTo((0.7 * 100 + 0.5 * 100) / 200.0, within(EPS));
    }

    @Test
    void gpusOnANodeWithoutTheCpuAQueuedJobNeedsAreFragmentation() {
        // 2 GPUs, 96 cores: H1 takes 1 GPU and 90 cores for 100 s; H2 (1 GPU, 10 cores) waits for the cores,
        // so the idle GPU is stranded until 100, then H2 runs 100-200
        List<TraceJob> trace = List.of(job("H1", 0, 100, 1, "a", b -> b.host(90_000, 1024)), job("H2", 0, 100, 1, "a", b -> b.host(10_000, 1024)));
        SimulationResult r = new Simulator(oneNode(2), SchedulerConfig.defaults("fcfs")).run(trace);
        assertThat(r.makespanSec()).isEqualTo(200);
        assertThat(r.fragmentation()).isCloseTo(1 * 100 / 400.0, within(EPS));
        // H3 (1 GPU, 2 cores) queued behind H2 under strict FCFS could use that GPU: not stranded
        List<TraceJob> withH3 = List.of(trace.get(0), trace.get(1), job("H3", 0, 10, 1, "a", b -> b.host(2_000, 1024)));
        SimulationResult r3 = new Simulator(oneNode(2), SchedulerConfig.defaults("fcfs")).run(withH3);
        assertThat(r3.makespanSec()).isEqualTo(200);
        assertThat(r3.fragmentation()).isZero();
    }

    @Test
    void rejectedJobsAreCountedAndLeftOutOfTheStatistics() {
        List<TraceJob> trace = List.of(job("ok", 0, 100, 1, "a", b -> b), job("huge", 0, 100, 8, "a", b -> b));
        SimulationResult r = new Simulator(oneNode(4), SchedulerConfig.defaults("fcfs")).run(trace);
        assertThat(r.jobs()).isEqualTo(1);
        assertThat(r.rejected()).isEqualTo(1);
        assertThat(r.rejectReasons()).containsKey("huge");
        assertThat(r.jct().mean()).isEqualTo(100);
    }

    private static SimulationResult.TenantResult tenant(SimulationResult r, String name) {
        return r.tenants().stream().filter(t -> t.tenant().equals(name)).findFirst().orElseThrow();
    }
}
