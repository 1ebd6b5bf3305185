package io.gpupool.bench;

import io.gpupool.engine.Scheduler;
import io.gpupool.engine.SchedulerConfig;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.JobSpec;
import org.junit.jupiter.api.Test;

import java.util.Set;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/** Keeps the benchmark workload honest: the pool, the job mix and the steady state it claims. */
class BenchWorkloadTest {
    @Test
    void clusterHasTheStatedSizeAndFiveModels() {
        ClusterSpec spec = BenchCluster.build(1000);
        assertThat(spec.nodes()).hasSize(1000);
        assertThat(spec.totalGpus()).isEqualTo(8000);
        Set<String> models = spec.nodes().stream().map(n -> n.gpus().getFirst().model().id()).collect(Collectors.toSet());
        assertThat(models).containsExactlyInAnyOrder(BenchCluster.MODELS);
    }

    @Test
    void everyJobIsAcceptedAndTheMixIsAsDocumented() {
        Scheduler s = new Scheduler(BenchCluster.build(100), SchedulerConfig.defaults("fcfs"));
        JobStream stream = new JobStream(1, "t");
        int n = 20_000, fractional = 0, constrained = 0;
        for (int i = 0; i < n; i++) {
            JobSpec j = stream.next(0);
            assertThat(s.submit(j, 0).accepted()).as("job %s", j).isTrue();
            if (!j.share().isWhole()) fractional++;
            if (!j.allowedModels().isEmpty()) constrained++;
        }
        assertThat(fractional / (double) n).isBetween(0.28, 0.32);
        assertThat(constrained / (double) n).isBetween(0.18, 0.22);
    }

    @Test
    void steadyPoolHoldsItsUtilisationAndMostDecisionsPlace() {
        SteadyPool pool = new SteadyPool(1000, "binpack+topology", 2000, 0.75, 42);
        for (int i = 0; i < 20_000; i++) pool.decide();
        assertThat(pool.utilisation()).isBetween(0.70, 0.76);
        assertThat(pool.placed).isGreaterThan(pool.failed * 10);
    }

    @Test
    void sameSeedSameDecisions() {
        SteadyPool a = new SteadyPool(200, "fgd", 500, 0.75, 7);
        SteadyPool b = new SteadyPool(200, "fgd", 500, 0.75, 7);
        for (int i = 0; i < 2000; i++) {
            assertThat(a.decide().allocation()).isEqualTo(b.decide().allocation());
        }
    }
}
