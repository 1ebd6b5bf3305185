package io.gpupool.optimize;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.constraints.LongRange;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fill patterns are exactly what the CP-SAT share model needs: every pattern fits the GPU and is maximal
 * (no further share of the batch fits beside it), and every set of shares that fits the GPU is covered by
 * some pattern (found by enumerating all count vectors).
 */
class SharePatternsPropertyTest {

    @Property(tries = 200, shrinking = ShrinkingMode.BOUNDED)
    void patternsFitAreMaximalAndCoverEverySetThatFits(@ForAll @LongRange(min = 1, max = 1_000_000) long seed) {
        Random r = new Random(seed);
        int milli = r.nextBoolean() ? 1000 : 100 + r.nextInt(900);
        long memory = 8_000 + r.nextInt(72_000);
        int tasks = 1 + r.nextInt(6);
        List<SharePatterns.Size> sizes = new ArrayList<>();
        int n = 1 + r.nextInt(5);
        int[] most = new int[n];
        for (int i = 0; i < n; i++) {
            sizes.add(new SharePatterns.Size(10 * (5 + r.nextInt(90)), r.nextInt(3) == 0 ? 4096L * (1 + r.nextInt(4)) : 1 + r.nextInt(40_000)));
            most[i] = 1 + r.nextInt(4);
        }
        List<int[]> patterns = SharePatterns.maximal(milli, memory, tasks, sizes, most, 100_000);
        assertThat(patterns).isNotNull().isNotEmpty();
        for (int[] p : patterns) {
            assertThat(fits(p, sizes, milli, memory, tasks)).as("pattern fits").isTrue();
            for (int i = 0; i < n; i++) {
                if (p[i] == most[i]) continue;
                p[i]++;
                assertThat(fits(p, sizes, milli, memory, tasks)).as("pattern is maximal").isFalse();
                p[i]--;
            }
        }
        int[] counts = new int[n];
        do {
            if (fits(counts, sizes, milli, memory, tasks)) {
                assertThat(patterns.stream().anyMatch(p -> SharePatterns.covers(p, counts))).as("a pattern covers %s", java.util.Arrays.toString(counts)).isTrue();
            }
        } while (next(counts, most));
    }

    private static boolean fits(int[] counts, List<SharePatterns.Size> sizes, int milli, long memory, int tasks) {
        long m = 0, mem = 0, t = 0;
        for (int i = 0; i < counts.length; i++) {
            m += (long) counts[i] * sizes.get(i).milli();
            mem += counts[i] * sizes.get(i).memory();
            t += counts[i];
        }
        return m <= milli && mem <= memory && t <= tasks;
    }

    /** The next count vector up to {@code most}, odometer order; false after the last. */
    private static boolean next(int[] counts, int[] most) {
        for (int i = 0; i < counts.length; i++) {
            if (counts[i] < most[i]) {
                counts[i]++;
                return true;
            }
            counts[i] = 0;
        }
        return false;
    }
}
