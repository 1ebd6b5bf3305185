package io.gpupool.optimize;

import io.gpupool.engine.Scheduler;
import io.gpupool.engine.SchedulerConfig;
import io.gpupool.engine.batch.BatchPlacer;
import io.gpupool.engine.batch.BatchPlacers;
import io.gpupool.model.ClusterSpecs;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.JobSpec;
import io.gpupool.model.SpecException;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Determinism for a seed, time budgets, and batch mode with the real solvers inside the scheduler. */
class SolverContractTest {

    @ParameterizedTest
    @ValueSource(strings = {"ga", "aco", "pso", "cpsat"})
    void theSameSeedGivesTheSameAnswer(String name) {
        BatchProblem p = InstanceGenerator.problem(name.equals("cpsat") ? 20 : 50, name.equals("cpsat") ? 8 : 16, 3);
        SolveSettings s = new SolveSettings(30, 11, 1, 8);
        SolveResult a = Solvers.create(name).solve(p, s);
        SolveResult b = Solvers.create(name).solve(p, s);
        assertThat(a.timedOut()).isFalse();
        assertThat(b.placement()).isEqualTo(a.placement());
        assertThat(b.score()).isEqualTo(a.score());
    }

    @ParameterizedTest
    @ValueSource(strings = {"ga", "aco", "pso", "cpsat"})
    void aSpentBudgetReturnsTheBestFeasibleAnswerAndSaysSo(String name) {
        BatchProblem p = InstanceGenerator.problem(1000, 128, 5);
        SolveResult r = Solvers.create(name).solve(p, new SolveSettings(0.05, 1, 1, 100_000));
        assertThat(r.timedOut()).isTrue();
        assertThat(r.optimal()).isFalse();
        assertThat(r.placement()).isNotEmpty();
        assertThat(EngineCheck.verify(p, r.placement())).isNull();
    }

    @Test
    void anUnknownSolverOrBadOptionIsAClearError() {
        assertRefused(() -> Solvers.create("annealing"), "solver");
        assertRefused(() -> BatchPlacers.create("ga:window=0"), "window");
        assertRefused(() -> BatchPlacers.create("cpsat:seconds=fast"), "seconds");
        assertRefused(() -> BatchPlacers.create("aco:colour=red"), "colour");
        assertRefused(() -> new SolveSettings(0, 1, 1, 0), "seconds");
    }

    private static void assertRefused(ThrowingCallable call, String field) {
        assertThatThrownBy(call).isInstanceOfSatisfying(SpecException.class, e -> assertThat(e.field()).isEqualTo(field));
    }

    @ParameterizedTest
    @ValueSource(strings = {"greedy", "ga:iterations=5", "aco:iterations=5", "pso:iterations=5", "cpsat:seconds=5"})
    void batchModePlacesAtLeastAsMuchAsOneByOneAndKeepsTheEngineConsistent(String placer) {
        var cluster = ClusterSpecs.parse(InstanceGenerator.clusterSpec(16), GpuCatalog.standard());
        List<JobSpec> jobs = InstanceGenerator.jobs(80, 9, "j");
        Scheduler oneByOne = new Scheduler(cluster, SchedulerConfig.defaults("fcfs-backfill"));
        Scheduler batch = new Scheduler(cluster, SchedulerConfig.defaults("fcfs-backfill"));
        BatchPlacer bp = BatchPlacers.create(placer + (placer.contains(":") ? "," : ":") + "window=80");
        batch.setBatchPlacer(bp);
        for (JobSpec j : jobs) {
            oneByOne.submit(j, 0);
            batch.submit(j, 0);
        }
        oneByOne.schedule(0);
        batch.schedule(0);
        batch.checkConsistency();
        assertThat(value(batch)).as(placer + " vs one by one").isGreaterThanOrEqualTo(value(oneByOne));
    }

    private static long value(Scheduler s) {
        return s.runningJobs().stream().mapToLong(j -> BatchProblem.weightOf(j.spec().priority()) * j.spec().gpuMilliDemand()).sum();
    }
}
