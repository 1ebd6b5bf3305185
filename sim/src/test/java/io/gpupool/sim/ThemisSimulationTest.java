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
 * {@code themis} replays a synthetic trace to the end and, with the same EASY reservations as {@code fcfs-backfill}
 * but its own order, gives jobs smaller slowdowns (JCT / run time, the finish-time fairness it orders by).
 */
class ThemisSimulationTest {

    @Test
    void themisFinishesEveryJobOfASyntheticTraceWithSmallerSlowdownsThanFcfsBackfill() {
        ClusterSpec pool = ClusterSpecs.parse("8x8:A100-80GB", GpuCatalog.standard());
        SyntheticTrace trace = new SyntheticTrace(new SyntheticTrace.Params(7, 1000, 0.9, pool.totalGpus(), 6, 0.2));
        SimulationResult backfill = new Simulator(pool, SchedulerConfig.defaults("fcfs-backfill")).run(trace);
        SimulationResult themis = new Simulator(pool, SchedulerConfig.defaults("themis")).run(trace);
        assertThat(themis.policy()).isEqualTo("themis");
        assertThat(themis.jobs()).isEqualTo(backfill.jobs()).isEqualTo(1000);
        assertThat(themis.unfinished()).isZero();
        assertThat(themis.rejected()).isEqualTo(backfill.rejected());
        assertThat(themis.slowdown().p95()).isLessThan(backfill.slowdown().p95());
        assertThat(themis.slowdown().mean()).isLessThan(backfill.slowdown().mean());
    }
}
