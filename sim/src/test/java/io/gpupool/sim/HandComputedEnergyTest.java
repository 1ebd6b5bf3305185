package io.gpupool.sim;

import io.gpupool.engine.SchedulerConfig;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.GpuDevice;
import io.gpupool.model.GpuModel;
import io.gpupool.model.JobSpec;
import io.gpupool.model.NodeSpec;
import io.gpupool.model.SpecException;
import io.gpupool.sim.energy.EnergyModel;
import io.gpupool.sim.energy.PowerDown;
import io.gpupool.sim.metrics.JobOutcome;
import io.gpupool.sim.metrics.ResultFormat;
import io.gpupool.sim.metrics.SimulationResult;
import io.gpupool.sim.trace.TraceJob;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Energy and node power-down in the simulator, worked out by hand. The GPU draws 50 W idle and 300 W at TDP; with the
 * default u = 0.8 a busy GPU draws 50 + 0.8 x 250 = 250 W, so a run adds 200 W per whole GPU and is charged 250 W per GPU.
 * Times are seconds, energies joules (exact to a micro-joule).
 */
class HandComputedEnergyTest {
    private static final GpuModel GPU = new GpuModel("X300", "test GPU", 32768, 0, 125, 900, 300, 50, 2, 300, List.of(), "test");
    private static final Offset<Double> MICRO_JOULE = Offset.offset(1e-6);
    private static final long MIN = 60;

    /** {@code nodes} nodes of {@code gpus} GPUs each, named n0, n1, ... */
    private static ClusterSpec pool(int nodes, int gpus) {
        return new ClusterSpec(IntStream.range(0, nodes).mapToObj(n -> new NodeSpec("n" + n,
                IntStream.range(0, gpus).mapToObj(i -> new GpuDevice(i, "GPU-" + n + "-" + i, GPU, true)).toList(),
                96_000, 1 << 20, List.of(), 1.0, 10, Map.of())).toList());
    }

    private static TraceJob job(String id, String tenant, long submit, long dur, int gpus, UnaryOperator<JobSpec.Builder> more) {
        return new TraceJob(more.apply(JobSpec.builder(id).tenant(tenant).submitSec(submit).gpus(gpus)).build(), dur * 1000);
    }

    private static TraceJob job(String id, long submit, long dur, int gpus) {
        return job(id, "t", submit, dur, gpus, b -> b);
    }

    private record Run(SimulationResult result, Map<String, JobOutcome> jobs) {
        double joules() { return result.energy().kwh() * 3.6e6; }
        double idleJoules() { return result.energy().idleKwh() * 3.6e6; }
        double tenantJoules(String t) {
            return result.tenants().stream().filter(x -> x.tenant().equals(t)).findFirst().orElseThrow().energyKwh() * 3.6e6;
        }
        SimulationResult.PowerDownResult down() { return result.energy().powerDown(); }
        long waitSec(String id) { return jobs.get(id).waitMs() / 1000; }
        long startSec(String id) { return jobs.get(id).firstStartMs() / 1000; }
    }

    private static Run run(ClusterSpec pool, PowerDown down, List<TraceJob> trace) {
        Map<String, JobOutcome> jobs = new LinkedHashMap<>();
        SimulationResult r = new Simulator(pool, SchedulerConfig.defaults("fcfs")).powerDown(down).onJobDone(o -> jobs.put(o.id(), o)).run(trace);
        return new Run(r, jobs);
    }

    @Test
    void theEnergyOfATinyTraceIsExactWholeAndSharedGpusIdleGpusIncluded() {
        // one node of two GPUs. a (tenant x) 0..1000 on one GPU, b (tenant y) 500..1500 on the other, c (tenant x)
        // half a GPU 2000..2100:
        //   0..500     one busy GPU, one idle:  2 x 50 + 200       = 300 W  -> 150,000 J
        //   500..1000  both busy:               2 x 50 + 2 x 200   = 500 W  -> 250,000 J
        //   1000..1500 b alone:                                     300 W  -> 150,000 J
        //   1500..2000 nothing runs:            2 x 50             = 100 W  ->  50,000 J
        //   2000..2100 c, half a GPU:           2 x 50 + 0.5 x 200 = 200 W  ->  20,000 J
        // total 620,000 J. Charged: a 250 W x 1000 s, b the same, c 0.5 x 250 W x 100 s = 12,500; idle = the rest
        Run r = run(pool(1, 2), null, List.of(
                job("a", "x", 0, 1000, 1, b -> b),
                job("b", "y", 500, 1000, 1, b -> b),
                job("c", "x", 2000, 100, 1, b -> b.milli(500))));
        assertThat(r.jobs().get("c").finishMs()).isEqualTo(2_100_000);
        assertThat(r.joules()).isCloseTo(620_000.0, MICRO_JOULE);
        assertThat(r.tenantJoules("x")).isCloseTo(250_000.0 + 12_500, MICRO_JOULE);
        assertThat(r.tenantJoules("y")).isCloseTo(250_000.0, MICRO_JOULE);
        assertThat(r.idleJoules()).isCloseTo(620_000.0 - 512_500, MICRO_JOULE);
        assertThat(r.down()).as("no power-down").isNull();
        // the output fields: kWh rounded to Wh
        assertThat(r.result().summary()).containsEntry("energy_kwh", 0.172).containsEntry("idle_energy_kwh", 0.03)
                .doesNotContainKey("asleep_node_hours");
        assertThat(r.result().tenantRows().getFirst()).containsEntry("energy_kwh", 0.073);
    }

    @Test
    void theUtilizationAssumptionIsAnOption() {
        // u = 0.5: a busy GPU draws 50 + 0.5 x 250 = 175 W; one GPU busy for 100 s on a one-GPU node: 17,500 J
        SimulationResult r = new Simulator(pool(1, 1), SchedulerConfig.defaults("fcfs")).energy(new EnergyModel(0.5))
                .run(List.of(job("a", 0, 100, 1)));
        assertThat(r.energy().kwh() * 3.6e6).isCloseTo(17_500.0, MICRO_JOULE);
        assertThat(r.energy().idleKwh()).isCloseTo(0.0, Offset.offset(1e-12));
        assertThatThrownBy(() -> new EnergyModel(1.5)).isInstanceOf(SpecException.class).hasMessageContaining("0..1");
    }

    @Test
    void aPoweredDownNodeWakesForAJobThatAddsExactlyTheWakeLatencyToItsWait() {
        // one node of two GPUs, idle=30m, wake=5m. a 0..600 on one GPU. The node is idle from 600 s and powers off at
        // 600 + 1800 = 2400 s. b (both GPUs) arrives at 3600: the node wakes, takes work at 3900, b runs 3900..4500.
        //   0..600     300 W -> 180,000 J       600..2400  idle, 100 W -> 180,000 J
        //   2400..3600 off, 0 W                 3600..3900 waking, idle power 100 W -> 30,000 J
        //   3900..4500 both busy, 500 W -> 300,000 J                                total 690,000 J
        List<TraceJob> trace = List.of(job("a", 0, 600, 1), job("b", 3600, 600, 2));
        Run r = run(pool(1, 2), PowerDown.parse("idle=30m,wake=5m"), trace);
        assertThat(r.startSec("b")).isEqualTo(3900);
        assertThat(r.waitSec("b")).as("the wake latency, exactly").isEqualTo(5 * MIN);
        assertThat(r.joules()).isCloseTo(690_000.0, MICRO_JOULE);
        assertThat(r.idleJoules()).isCloseTo(690_000.0 - 150_000 - 300_000, MICRO_JOULE);
        assertThat(r.down().asleepNodeHours()).isCloseTo(1200 / 3600.0, Offset.offset(1e-12));
        assertThat(r.down().wakeups()).isEqualTo(1);
        assertThat(r.down().wakeWaitSec()).isEqualTo(300.0);
        assertThat(r.down().avgWakeWaitSec()).isEqualTo(150.0);
        assertThat(r.down().jobsWaitedForWake()).isEqualTo(1);
        // allocated 1 x 600 + 2 x 600 GPU-s of 2 GPUs x (4500 - 1200) s powered on; a node used 1200 s of 3300 s on
        assertThat(r.down().poweredUtilization()).isCloseTo(1800.0 / 6600, Offset.offset(1e-12));
        assertThat(r.down().nodeUtilization()).isCloseTo(1200.0 / 3300, Offset.offset(1e-12));
        assertThat(r.result().summary()).containsEntry("power_down", "idle=30m,wake=5m").containsEntry("wakeups", 1L)
                .containsEntry("wake_wait_s", 300.0).containsEntry("asleep_node_hours", 0.333);
        assertThat(ResultFormat.table(List.of(r.result()))).contains("kWh", "asleep", "wake wait");

        // the same without power-down: b starts on arrival; the node idles 600..3600 at 100 W: 180,000 + 300,000 + 300,000
        Run on = run(pool(1, 2), null, trace);
        assertThat(on.waitSec("b")).isZero();
        assertThat(on.joules()).isCloseTo(780_000.0, MICRO_JOULE);
        assertThat(ResultFormat.table(List.of(on.result()))).contains("kWh").doesNotContain("asleep");

        // off power: 5 W for the 1,200 s off
        Run withOff = run(pool(1, 2), PowerDown.parse("idle=30m,wake=5m,off=5"), trace);
        assertThat(withOff.joules()).isCloseTo(696_000.0, MICRO_JOULE);
    }

    @Test
    void aNodeIsNeverPoweredDownWhileAJobRunsOnIt() {
        // two nodes of two GPUs, idle=30m. a holds one GPU of n0 for 3 h (n0's other GPU idles): n0 stays on; n1, unused,
        // powers off at 30 min and sleeps until the last finish at 3 h: 2.5 node-hours
        Run r = run(pool(2, 2), PowerDown.parse("idle=30m,wake=5m"), List.of(job("a", 0, 3 * 3600, 1)));
        assertThat(r.down().asleepNodeHours()).isCloseTo(2.5, Offset.offset(1e-12));
        assertThat(r.down().wakeups()).isZero();
        // n0: 50 + 250 W for 3 h; n1: 100 W for 30 min
        assertThat(r.joules()).isCloseTo(300.0 * 3 * 3600 + 100.0 * 1800, MICRO_JOULE);
        // keep=1 keeps n0 on whatever happens, keep=2 both: nothing sleeps
        assertThat(run(pool(2, 2), PowerDown.parse("idle=30m,wake=5m,keep=2"), List.of(job("a", 0, 3 * 3600, 1))).down().asleepNodeHours())
                .isZero();
    }

    @Test
    void aJobWakesAsFewNodesAsItNeedsAndJobsShareAWakingNode() {
        // four nodes of two GPUs, idle=10m, wake=2m; w keeps n0 busy, the others power off at 10 min.
        // At 1 h: p and q (one GPU each) arrive together, n0 has one free GPU: p takes it, q wakes one node (n1) and
        // starts at 1h02. At 2 h: g, a gang of 2 x 2 GPUs, wakes two nodes, not three
        Run r = run(pool(4, 2), PowerDown.parse("idle=10m,wake=2m"), List.of(
                job("w", 0, 3 * 3600, 1),
                job("p", 3600, 600, 1),
                job("q", 3600, 600, 1),
                job("g", "t", 7200, 600, 4, b -> b.shape(2, 2))));
        assertThat(r.waitSec("p")).isZero();
        assertThat(r.waitSec("q")).isEqualTo(2 * MIN);
        assertThat(r.waitSec("g")).isEqualTo(2 * MIN);
        // n1 woke for q at 1 h, ran it 1h02..1h12, slept again at 1h22; g then woke two nodes
        assertThat(r.down().wakeups()).isEqualTo(3);
        assertThat(r.down().wakeWaitSec()).isEqualTo(240.0);
    }

    @Test
    void badPowerDownSettingsAreRefusedNamingTheParameter() {
        assertThatThrownBy(() -> PowerDown.parse("idle=30m")).isInstanceOf(SpecException.class).hasMessageContaining("wake");
        assertThatThrownBy(() -> PowerDown.parse("wake=5m")).isInstanceOf(SpecException.class).hasMessageContaining("idle");
        assertThatThrownBy(() -> PowerDown.parse("idle=soon,wake=5m")).isInstanceOf(SpecException.class).hasMessageContaining("idle");
        assertThatThrownBy(() -> PowerDown.parse("idle=30m,wake=5m,nap=1")).isInstanceOf(SpecException.class).hasMessageContaining("nap");
        assertThatThrownBy(() -> PowerDown.parse("idle=30m,wake=5m,keep=-1")).isInstanceOf(SpecException.class).hasMessageContaining("keep");
        assertThatThrownBy(() -> PowerDown.parse("idle=30m,wake=5m,off=x")).isInstanceOf(SpecException.class).hasMessageContaining("off");
        assertThat(PowerDown.parse("idle=1h,wake=0,keep=4,off=10")).isEqualTo(new PowerDown(3_600_000, 0, 4, 10));
    }

    @Test
    void theCatalogsV100FiguresGiveTheDocumentedBusyPower() {
        GpuModel v100 = GpuCatalog.standard().require("V100-32GB", "test");
        // docs/results-philly.md: 40 W idle, 300 W TDP, u = 0.8: 248 W busy
        assertThat(EnergyModel.DEFAULT.busyWatts(v100)).isEqualTo(248.0);
    }
}
