package io.gpupool.optimize;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the memetic GA, ACO and PSO deliver: on generated instances where greedy falls short of CP-SAT's
 * proven optimum, each reaches that optimum (with a budget it does not exhaust, so the answer is the seed's
 * own); on a 2,000-job window each keeps to its time budget and never does worse than greedy.
 */
class MetaheuristicQualityTest {
    private static BatchProblem large;

    @BeforeAll
    static void largeWindow() {
        large = InstanceGenerator.problem(2000, 256, 3);
    }

    /** Instances (jobs, nodes, seed) on which greedy is below the optimum (checked in the test). */
    static Stream<Arguments> greedyFallsShort() {
        Stream.Builder<Arguments> out = Stream.builder();
        for (String solver : new String[] {"ga", "aco", "pso"}) {
            out.add(Arguments.of(solver, 20, 8, 1L));
            out.add(Arguments.of(solver, 20, 8, 7L));
            out.add(Arguments.of(solver, 80, 16, 5L));
        }
        return out.build();
    }

    @ParameterizedTest(name = "{0} on {1}x{2} seed {3}")
    @MethodSource("greedyFallsShort")
    void reachesTheProvenOptimumWhereGreedyFallsShort(String solver, int jobs, int nodes, long seed) {
        BatchProblem p = InstanceGenerator.problem(jobs, nodes, seed);
        SolveResult optimum = Solvers.create("cpsat").solve(p, SolveSettings.of(60, seed));
        assertThat(optimum.optimal()).as("CP-SAT proves the optimum").isTrue();
        long greedy = Solvers.create("greedy").solve(p, SolveSettings.of(60, seed)).score().value();
        assertThat(greedy).as("greedy on this instance").isLessThan(optimum.score().value());

        SolveResult r = Solvers.create(solver).solve(p, new SolveSettings(120, seed, 1, 10));
        assertThat(r.timedOut()).as(solver + " finished within its budget").isFalse();
        assertThat(EngineCheck.verify(p, r.placement())).isNull();
        assertThat(r.score().value()).as(solver + " value").isEqualTo(optimum.score().value());
    }

    @ParameterizedTest
    @ValueSource(strings = {"ga", "aco", "pso"})
    void keepsToItsBudgetAt2000JobsAndNeverLosesToGreedy(String solver) {
        double budget = 2;
        long greedy = Solvers.create("greedy").solve(large, SolveSettings.of(budget, 1)).score().value();
        SolveResult r = Solvers.create(solver).solve(large, SolveSettings.of(budget, 1));
        // the deadline is checked between placement passes; one pass and the report stay well under a second
        assertThat(r.seconds()).as(solver + " wall time (s)").isLessThan(budget + 1);
        assertThat(r.timedOut()).as("2 s are not enough to finish at 2,000 jobs").isTrue();
        assertThat(EngineCheck.verify(large, r.placement())).isNull();
        assertThat(r.score().value()).as(solver + " vs greedy").isGreaterThanOrEqualTo(greedy);
    }
}
