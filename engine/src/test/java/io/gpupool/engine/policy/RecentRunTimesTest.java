package io.gpupool.engine.policy;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.stream.LongStream;

import static org.assertj.core.api.Assertions.assertThat;

class RecentRunTimesTest {
    @Test
    void keepsTheLatestRunsInOrderWhileGrowingAndAfterWrapping() {
        RecentRunTimes r = new RecentRunTimes(10);
        for (long v = 1; v <= 7; v++) r.add(v);
        assertThat(r.oldestFirst()).containsExactly(1, 2, 3, 4, 5, 6, 7);
        assertThat(r.median()).isEqualTo(4);
        for (long v = 8; v <= 23; v++) r.add(v);
        assertThat(r.size()).isEqualTo(10);
        assertThat(r.oldestFirst()).containsExactly(LongStream.rangeClosed(14, 23).toArray());
        assertThat(r.median()).isEqualTo((18 + 19) / 2);
    }

    @Test
    void medianOfEveryPrefixIsThatOfTheLatestRuns() {
        RecentRunTimes r = new RecentRunTimes(5);
        long[] runs = {50, 10, 40, 20, 30, 90, 60, 70, 80, 5};
        for (int i = 0; i < runs.length; i++) {
            r.add(runs[i]);
            long[] kept = Arrays.copyOfRange(runs, Math.max(0, i - 4), i + 1);
            Arrays.sort(kept);
            int n = kept.length;
            long expected = n % 2 == 1 ? kept[n / 2] : (kept[n / 2 - 1] + kept[n / 2]) / 2;
            assertThat(r.median()).as("after %d runs", i + 1).isEqualTo(expected);
        }
    }

    /** The kept sorted copy gives the median a sort of the kept run times gives, over random histories with many ties. */
    @Test
    void medianIsThatOfSortingTheKeptRunsOverRandomHistories() {
        for (long seed = 1; seed <= 200; seed++) {
            java.util.SplittableRandom rnd = new java.util.SplittableRandom(seed);
            int capacity = rnd.nextInt(1, 70);
            int range = rnd.nextBoolean() ? 5 : 1_000_000;   // few distinct values (ties, evicting one of equals) or many
            RecentRunTimes r = new RecentRunTimes(capacity);
            for (int i = 0; i < 300; i++) {
                r.add(1 + rnd.nextInt(range));
                long[] kept = r.oldestFirst();
                assertThat(kept).hasSize(Math.min(i + 1, capacity));
                Arrays.sort(kept);
                int n = kept.length;
                long expected = n % 2 == 1 ? kept[n / 2] : (kept[n / 2 - 1] + kept[n / 2]) / 2;
                assertThat(r.median()).as("seed %d capacity %d after %d runs", seed, capacity, i + 1).isEqualTo(expected);
            }
        }
    }
}
