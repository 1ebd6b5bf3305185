package io.gpupool.engine.policy;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The levels and the index per level, on distributions whose answer is known. */
class GittinsIndexTest {
    private static final ServiceLevels LEVELS = new ServiceLevels(60, 2, 1e6);   // 60, 120, 240, ... GPU-seconds

    @Test
    void levelsAreExactAtTheirEdges() {
        assertThat(LEVELS.levelOf(0)).isZero();
        assertThat(LEVELS.levelOf(59.999)).isZero();
        assertThat(LEVELS.levelOf(60)).isEqualTo(1);
        assertThat(LEVELS.levelOf(119.999)).isEqualTo(1);
        assertThat(LEVELS.levelOf(120)).isEqualTo(2);
        assertThat(LEVELS.lower(2)).isEqualTo(120);
        assertThat(LEVELS.upper(2)).isEqualTo(240);
        assertThat(LEVELS.upper(LEVELS.count() - 1)).isInfinite();
    }

    @Test
    void whenEveryJobHasTheSameServiceTheIndexGrowsAsAJobNearsIt() {
        double[] counts = new double[LEVELS.count()];
        counts[LEVELS.levelOf(4000)] = 100;   // every job ends in level [3840, 7680)
        double[] index = GittinsIndex.of(LEVELS, counts);
        for (int i = 1; i <= LEVELS.levelOf(4000); i++) assertThat(index[i]).as("level %d", i).isGreaterThan(index[i - 1]);
    }

    @Test
    void whenMostJobsEndSoonTheIndexDropsPastThem() {
        double[] counts = new double[LEVELS.count()];
        counts[0] = 90;                        // under a minute
        counts[LEVELS.levelOf(100_000)] = 10;  // about a day
        double[] index = GittinsIndex.of(LEVELS, counts);
        assertThat(index[0]).isGreaterThan(index[1] * 10);
        assertThat(index[1]).isLessThan(index[LEVELS.levelOf(100_000)]);   // the long ones, once near their end, rise again
    }
}
