package io.gpupool.optimize;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.constraints.LongRange;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * CP-SAT's proven optimum equals the best value found by enumerating every placement the engine accepts
 * ({@link BruteForce}), over random small instances with whole GPUs, gangs, NVLink-bound replicas, shares
 * with memory caps, tight split counts, oversubscribed memory, busy GPUs and model restrictions. Both ways
 * of modelling shares are checked: fill patterns (the default) and per-node sums with packing cuts (the
 * fallback for groups with too many patterns).
 */
class CpSatOptimumPropertyTest {

    @Property(tries = 40, shrinking = ShrinkingMode.BOUNDED)
    void cpSatOptimumEqualsBruteForce(@ForAll @LongRange(min = 1, max = 1_000_000) long seed) {
        assertOptimal(new CpSatSolver(), seed);
    }

    @Property(tries = 20, shrinking = ShrinkingMode.BOUNDED)
    void withPackingCutsInsteadOfPatternsTheOptimumIsTheSame(@ForAll @LongRange(min = 1, max = 1_000_000) long seed) {
        assertOptimal(new CpSatSolver(0), seed);
    }

    private static void assertOptimal(CpSatSolver solver, long seed) {
        BatchProblem p = SmallInstances.random(seed);
        long enumerated = BruteForce.bestValue(p);
        SolveResult r = solver.solve(p, SolveSettings.of(20, seed));
        assertThat(r.optimal()).as("CP-SAT proves optimality on a small instance").isTrue();
        assertThat(EngineCheck.verify(p, r.placement())).isNull();
        assertThat(r.score().value()).as("CP-SAT optimum vs enumeration (seed %d): %s", seed, r.detail()).isEqualTo(enumerated);
        assertThat(r.bound()).hasValue(enumerated);
    }
}
