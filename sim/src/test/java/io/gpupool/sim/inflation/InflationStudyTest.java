package io.gpupool.sim.inflation;

import io.gpupool.model.ClusterSpec;
import io.gpupool.model.ClusterSpecs;
import io.gpupool.model.GpuDevice;
import io.gpupool.model.NodeSpec;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.JobSpec;
import io.gpupool.model.SpecException;
import io.gpupool.sim.report.InflationReport;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class InflationStudyTest {
    private static final GpuCatalog CATALOG = GpuCatalog.standard();

    @Test
    void sharesThatCannotPairLeaveGpusUnallocated() {
        // 2 GPUs, every task asks 0.6 of a GPU: two fit, no GPU takes a second; 1.2 GPUs of demand allocated at most
        var pool = ClusterSpecs.parse("1x2:T4", CATALOG);
        var study = new InflationStudy(pool, List.of(JobSpec.builder("t").milli(600).build()), 1, 120, 5);
        InflationStudy.Curve c = study.run("binpack", InflationStudy.placement("binpack"));
        // arrivals in steps of 0.6 GPU = 30% of the pool: points at 30, 60, 90, 120
        assertThat(c.curve()).extracting(InflationStudy.Point::arrivedPct).containsExactly(30.0, 30.0, 30.0, 30.0, 30.0, 30.0,
                60.0, 60.0, 60.0, 60.0, 60.0, 60.0, 90.0, 90.0, 90.0, 90.0, 90.0, 90.0, 120.0, 120.0, 120.0, 120.0, 120.0, 120.0);
        InflationStudy.Point at90 = c.curve().get(12), at120 = c.curve().getLast();
        assertThat(at90.allocatedPct()).isCloseTo(100 * 1.2 / 1.8, within(0.01));
        assertThat(at90.unallocatedGpus()).isCloseTo(0.8, within(1e-9));
        assertThat(at120.allocatedPct()).isCloseTo(50, within(0.01));
    }

    @Test
    void everyPlacementSeesTheSameDrawsAndPointsComeAtLeastEvery5Percent() {
        // 64 GPUs: the largest task (2 GPUs) moves arrived demand by 3%
        var pool = ClusterSpecs.parse("8x8:A100-80GB", CATALOG);
        List<JobSpec> tasks = List.of(JobSpec.builder("a").milli(300).build(), JobSpec.builder("b").milli(700).build(),
                JobSpec.builder("c").gpus(2).build(), JobSpec.builder("d").gpus(1).build());
        var study = new InflationStudy(pool, tasks, 7, 110, 1);
        var fgd = study.run("fgd", InflationStudy.placement("fgd"));
        var binpack = study.run("binpack", InflationStudy.placement("binpack"));
        assertThat(fgd.curve()).extracting(InflationStudy.Point::arrivedPct).isEqualTo(binpack.curve().stream().map(InflationStudy.Point::arrivedPct).toList());
        double prev = 0;
        for (var p : fgd.curve()) {
            assertThat(p.arrivedPct() - prev).isLessThanOrEqualTo(5.0);
            prev = p.arrivedPct();
        }
        assertThat(prev).isGreaterThanOrEqualTo(110);
        // the same draws and seed: the same curve
        assertThat(study.run("fgd", InflationStudy.placement("fgd"))).isEqualTo(fgd);
    }

    @Test
    void tasksKeepTheirHostRequestSoCpuCanStrandGpus() {
        // one node of 2 T4s with 8 cores; every task asks 1 GPU and 6 cores: the second GPU is never allocated
        var gpus = java.util.stream.IntStream.range(0, 2).mapToObj(i -> new GpuDevice(i, "GPU-" + i, CATALOG.require("T4", "test"), true)).toList();
        var pool = new ClusterSpec(List.of(new NodeSpec("n0", gpus, 8_000, 65_536, List.of(), 1.0, 10, java.util.Map.of())));
        var study = new InflationStudy(pool, List.of(JobSpec.builder("t").gpus(1).host(6_000, 1024).build()), 1, 100, 5);
        InflationStudy.Point last = study.run("fgd", InflationStudy.placement("fgd")).curve().getLast();
        assertThat(last.arrivedPct()).isEqualTo(100.0);
        assertThat(last.allocatedPct()).isEqualTo(50.0);
        assertThat(last.unallocatedGpus()).isEqualTo(1.0);
    }

    @Test
    void cpuOnlyTasksTakeHostCpuThatStrandsGpusUnlessThePlacementLooksAhead() {
        // "a": 1 T4, 4 cores; "b": 1 T4, 12 cores. Tasks: T = 1 GPU + 4 cores, C = CPU-only, 4 cores.
        // Seed 13 draws C, T, T (SplittableRandom(13).nextInt(2): 1, 0, 0); the second T brings arrived demand to 100%.
        // C on an empty pool: best-fit (CPU left 0 against 8 cores, GPUs left equal) and binpack (host use after
        // placing 100% against 33%) take "a", whose GPU then lacks CPU: one T runs on "b", the other is turned
        // away. FGD sees that C on "a" strands a GPU (fragmentation +1000) and on "b" nothing (8 cores left):
        // C goes to "b", and both Ts run.
        var r = new java.util.SplittableRandom(13);
        assertThat(List.of(r.nextInt(2), r.nextInt(2), r.nextInt(2))).containsExactly(1, 0, 0);
        var pool = new ClusterSpec(List.of(t4Node("a", 4_000), t4Node("b", 12_000)));
        JobSpec t = JobSpec.builder("T").gpus(1).host(4_000, 0).build();
        JobSpec c = JobSpec.builder("C").shape(1, 0).host(4_000, 0).build();
        var study = new InflationStudy(pool, List.of(t, c), 13, 100, 5);
        for (String placement : List.of("fgd", "best-fit", "binpack")) {
            InflationStudy.Point last = study.run(placement, InflationStudy.placement(placement)).curve().getLast();
            assertThat(last.arrivedPct()).isEqualTo(100.0);
            assertThat(last.unallocatedGpus()).as(placement).isEqualTo(placement.equals("fgd") ? 0.0 : 1.0);
            assertThat(last.allocatedPct()).as(placement).isEqualTo(placement.equals("fgd") ? 100.0 : 50.0);
        }
        // without the CPU-only task every placement allocates both GPUs
        var gpuOnly = new InflationStudy(pool, List.of(t), 13, 100, 5);
        assertThat(gpuOnly.run("best-fit", InflationStudy.placement("best-fit")).curve().getLast().unallocatedGpus()).isEqualTo(0.0);
        // a list of CPU-only tasks alone brings no GPU demand: refused, not an endless study
        assertThatThrownBy(() -> new InflationStudy(pool, List.of(c), 1, 100, 5)).isInstanceOf(SpecException.class)
                .hasMessageContaining("no GPU task");
    }

    private static NodeSpec t4Node(String name, long cpuMilli) {
        return new NodeSpec(name, List.of(new GpuDevice(0, "GPU-" + name, CATALOG.require("T4", "test"), true)), cpuMilli, 65_536,
                List.of(), 1.0, 10, java.util.Map.of());
    }

    @Test
    void theJsonIsTheContractShape() {
        var pool = ClusterSpecs.parse("1x2:T4", CATALOG);
        var c = new InflationStudy(pool, List.of(JobSpec.builder("t").gpus(1).build()), 1, 100, 5).run("best-fit", InflationStudy.placement("best-fit"));
        String json = InflationReport.json(List.of(c)).replaceAll("\\s", "");
        assertThat(json).startsWith("[{\"placement\":\"best-fit\",\"curve\":[{\"arrived_pct\":50.0,\"allocated_pct\":100.0,\"unallocated_gpus\":1.0}");
    }

    @Test
    void placementNamesAreEnginePlacementConfigs() {
        assertThat(InflationStudy.placement("fgd").candidateLimit()).isZero();
        assertThat(InflationStudy.placement("binpack+topology").label()).isEqualTo("binpack,topology");
        assertThat(InflationStudy.placement("binpack;limit=8").candidateLimit()).isEqualTo(8);
        assertThatThrownBy(() -> InflationStudy.placement("firstfit")).isInstanceOf(SpecException.class).hasMessageContaining("unknown scorer 'firstfit'");
    }
}
