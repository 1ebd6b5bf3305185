package io.gpupool.sim;

import io.gpupool.engine.SchedulerConfig;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.ClusterSpecs;
import io.gpupool.model.GpuCatalog;
import io.gpupool.sim.metrics.SimulationResult;
import io.gpupool.sim.trace.SyntheticTrace;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code gittins} replays a Helios-shaped synthetic trace to the end without run-time estimates and, from the
 * distribution it learns as jobs finish, gives a lower mean JCT than las (attained service alone) and qssf
 * (predicted service), with a 99th-percentile wait no longer than fair-share's.
 */
class GittinsSimulationTest {

    @Test
    void gittinsBeatsLasAndQssfOnMeanJctWithoutATailWorseThanFairShare() {
        ClusterSpec pool = ClusterSpecs.parse("8x8:A100-80GB", GpuCatalog.standard());
        SyntheticTrace trace = new SyntheticTrace(new SyntheticTrace.Params(11, 3000, 0.9, pool.totalGpus(), 4, 0.2));
        SimulationResult gittins = new Simulator(pool, SchedulerConfig.defaults("gittins")).run(trace);
        SimulationResult las = new Simulator(pool, SchedulerConfig.defaults("las")).run(trace);
        SimulationResult qssf = new Simulator(pool, SchedulerConfig.defaults("qssf")).run(trace);
        SimulationResult fairShare = new Simulator(pool, SchedulerConfig.defaults("fair-share")).run(trace);
        assertThat(gittins.policy()).isEqualTo("gittins");
        assertThat(gittins.jobs()).isEqualTo(las.jobs()).isEqualTo(3000 - gittins.rejected());
        assertThat(gittins.unfinished()).isZero();
        assertThat(gittins.jct().mean()).isLessThan(las.jct().mean()).isLessThan(qssf.jct().mean());
        assertThat(gittins.waiting().p99()).isLessThanOrEqualTo(fairShare.waiting().p99());
    }
}
