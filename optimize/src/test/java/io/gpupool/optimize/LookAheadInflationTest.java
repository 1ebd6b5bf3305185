package io.gpupool.optimize;

import io.gpupool.engine.batch.BatchPlacers;
import io.gpupool.model.ClusterSpecs;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.JobSpec;
import io.gpupool.model.SpecException;
import io.gpupool.sim.inflation.InflationStudy;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Online placement with a look-ahead window ({@link InflationStudy#runLookAhead}) and the offline answer
 * ({@link InflationStudy#offline}) with the real batch placers. One T4 node with 2 GPUs; tasks: a half GPU
 * (index 0) or a whole GPU (index 1). Seed 7 draws half, half, whole: 2.0 GPUs, 100% of the pool.
 * One at a time, the spread GPU policy puts the halves on different GPUs and the whole GPU finds none free.
 */
class LookAheadInflationTest {
    private static final List<JobSpec> TASKS = List.of(JobSpec.builder("half").milli(500).build(), JobSpec.builder("whole").gpus(1).build());
    private final InflationStudy study = new InflationStudy(ClusterSpecs.parse("1x2:T4", GpuCatalog.standard()), TASKS, 7, 100, 5);

    @Test
    void theSeedDrawsHalfHalfWhole() {
        var r = new SplittableRandom(7);
        assertThat(List.of(r.nextInt(2), r.nextInt(2), r.nextInt(2))).containsExactly(0, 0, 1);
    }

    @Test
    void oneAtATimeTheSpreadPolicyStrandsAGpu() {
        InflationStudy.Point last = study.run("spread", InflationStudy.placement("spread")).curve().getLast();
        assertThat(last.arrivedPct()).isEqualTo(100.0);
        assertThat(last.unallocatedGpus()).isEqualTo(1.0);
    }

    @Test
    void aWindowOfThreeLetsTheBatchPlacerPlaceEverything() {
        // greedy places the window largest first: the whole GPU, then both halves on the other GPU
        var run = study.runLookAhead("spread/greedy", InflationStudy.placement("spread"), BatchPlacers.create("greedy:window=3"), 3);
        InflationStudy.Point last = run.curve().curve().getLast();
        assertThat(last.arrivedPct()).isEqualTo(100.0);
        assertThat(last.allocatedPct()).isEqualTo(100.0);
        assertThat(last.unallocatedGpus()).isEqualTo(0.0);
        assertThat(run.decisions().rounds()).isEqualTo(1);
        assertThat(run.decisions().tasks()).isEqualTo(3);
        // the points crossed while the tasks were held count them as decided: at 25% the first half is allocated
        assertThat(run.curve().curve().getFirst()).isEqualTo(new InflationStudy.Point(25.0, 100.0, 1.5));
        assertThat(run.curve().curve()).hasSize(20);
    }

    @Test
    void aWindowOfOneDecidesEachTaskInItsOwnRound() {
        // greedy's answer also weighs the idle GPUs that shares open, so even alone the second half joins the first
        var run = study.runLookAhead("spread/greedy", InflationStudy.placement("spread"), BatchPlacers.create("greedy:window=1"), 1);
        assertThat(run.curve().curve().getLast().unallocatedGpus()).isEqualTo(0.0);
        assertThat(run.decisions().rounds()).isEqualTo(3);
        assertThat(run.decisions().tasks()).isEqualTo(3);
    }

    @Test
    void cpSatPlacesTheSharesTogetherEvenOneTaskAtATime() {
        // its second objective opens as few idle GPUs for shares as it can: the second half joins the first
        var run = study.runLookAhead("spread/cpsat", InflationStudy.placement("spread"), BatchPlacers.create("cpsat:window=1,seconds=2"), 1);
        assertThat(run.curve().curve().getLast().unallocatedGpus()).isEqualTo(0.0);
    }

    @Test
    void offlinePlacesEveryTaskArrivedByTheLevelAtOnce() {
        InflationStudy.Offline o = study.offline(InflationStudy.placement("spread"), BatchPlacers.create("cpsat:window=100,seconds=2"), 100);
        assertThat(o.tasks()).isEqualTo(3);
        assertThat(o.point()).isEqualTo(new InflationStudy.Point(100.0, 100.0, 0.0));
        assertThat(o.minUnallocatedGpus()).as("CP-SAT's bound: every GPU can be allocated").isEqualTo(0.0);
        // at 50% only the two halves have arrived (1.0 GPU): both are placed, one GPU of two stays unallocated
        InflationStudy.Offline half = study.offline(InflationStudy.placement("spread"), BatchPlacers.create("cpsat:window=100,seconds=2"), 50);
        assertThat(half.tasks()).isEqualTo(2);
        assertThat(half.point().unallocatedGpus()).isEqualTo(1.0);
        assertThat(half.minUnallocatedGpus()).as("no placement allocates more than what arrived").isEqualTo(1.0);
        // greedy proves no bound of its own beyond the demand: still at most what arrived
        InflationStudy.Offline greedy = study.offline(InflationStudy.placement("spread"), BatchPlacers.create("greedy:window=100"), 100);
        assertThat(greedy.point().unallocatedGpus()).isEqualTo(0.0);
    }

    @Test
    void untilThePoolIsFullEnoughEachTaskIsPlacedOnArrivalByThePlacementAlone() {
        // the pool is never 100% allocated before the last arrival: spread places every task alone, and strands a GPU
        var run = study.runLookAhead("spread/greedy@100%", InflationStudy.placement("spread"), BatchPlacers.create("greedy:window=3"), 3, 100);
        assertThat(run.curve().curve().getLast().unallocatedGpus()).isEqualTo(1.0);
        assertThat(run.decisions().rounds()).isEqualTo(3);
        // from 25% allocated (the first half) on, the rest is held and decided together: nothing strands
        var late = study.runLookAhead("spread/greedy@25%", InflationStudy.placement("spread"), BatchPlacers.create("greedy:window=3"), 3, 25);
        assertThat(late.curve().curve().getLast().unallocatedGpus()).isEqualTo(0.0);
        assertThat(late.decisions().rounds()).isEqualTo(2);
        assertThatThrownBy(() -> study.runLookAhead("x", InflationStudy.placement("spread"), BatchPlacers.create("greedy"), 3, 101))
                .isInstanceOf(SpecException.class).hasMessageContaining("hold-from");
    }

    @Test
    void holdMustBeAtLeastOneTask() {
        assertThatThrownBy(() -> study.runLookAhead("x", InflationStudy.placement("spread"), BatchPlacers.create("greedy"), 0))
                .isInstanceOf(SpecException.class).hasMessageContaining("hold");
    }
}
