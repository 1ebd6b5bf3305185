package io.gpupool.engine.round;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The expected ends are taken in exactly the order of sorting every running job by (end, arrival): over random
 * sets with many tied ends, whether a reservation takes one end, a few or all of them.
 */
class EndOrderTest {
    @Test
    void takesTheIndicesInSortedOrder() {
        for (long seed = 1; seed <= 2000; seed++) {
            SplittableRandom rnd = new SplittableRandom(seed);
            int n = rnd.nextInt(0, 60);
            long[] end = new long[n];
            long[] seq = new long[n];
            List<Integer> sorted = new ArrayList<>();
            List<Long> seqs = new ArrayList<>();
            for (long s = 0; s < n; s++) seqs.add(s * 3 + rnd.nextInt(3));   // unique, in no particular order
            Collections.shuffle(seqs, new java.util.Random(seed));
            int distinct = rnd.nextBoolean() ? 3 : 1_000;                     // clamped ends tie often
            for (int i = 0; i < n; i++) {
                end[i] = 1_000 + rnd.nextInt(distinct);
                seq[i] = seqs.get(i);
                sorted.add(i);
            }
            sorted.sort(Comparator.<Integer>comparingLong(i -> end[i]).thenComparingLong(i -> seq[i]));
            EndOrder order = new EndOrder(end, seq);
            int take = rnd.nextInt(0, n + 1);
            List<Integer> taken = new ArrayList<>();
            for (int k = 0; k < take; k++) {
                assertThat(order.isEmpty()).isFalse();
                taken.add(order.next());
            }
            assertThat(taken).as("seed %d", seed).containsExactlyElementsOf(sorted.subList(0, take));
            assertThat(order.isEmpty()).isEqualTo(take == n);
        }
    }
}
