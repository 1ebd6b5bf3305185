package io.gpupool.engine.policy;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The heap {@link RunningBands} keeps its entries' next crossings in, against a plain list over random histories of
 * adds, removes and crossings moved (later, as a re-banded job's does, or anywhere): its first item is always an
 * earliest one, and the items due by a time are exactly those of the list, each once.
 */
class CrossingHeapTest {
    private static final class Job extends CrossingHeap.Item {
        Job(long crossingMs) {
            this.crossingMs = crossingMs;
        }
    }

    @Test
    void answersAsAPlainListDoes() {
        for (long seed = 1; seed <= 30; seed++) {
            SplittableRandom rnd = new SplittableRandom(seed);
            CrossingHeap<Job> heap = new CrossingHeap<>();
            List<Job> plain = new ArrayList<>();
            for (int step = 0; step < 600; step++) {
                int op = rnd.nextInt(10);
                if (op < 4 || plain.isEmpty()) {
                    // few distinct times, so that ties are common; now and then none (Long.MAX_VALUE)
                    Job j = new Job(rnd.nextInt(8) == 0 ? Long.MAX_VALUE : rnd.nextLong(0, 200));
                    heap.add(j);
                    plain.add(j);
                } else if (op < 6) {
                    Job j = plain.remove(rnd.nextInt(plain.size()));
                    heap.remove(j);
                    assertThat(j.slot).isEqualTo(-1);
                } else {
                    Job j = plain.get(rnd.nextInt(plain.size()));
                    j.crossingMs = op < 9 && j.crossingMs < Long.MAX_VALUE ? j.crossingMs + rnd.nextLong(0, 50) : rnd.nextLong(0, 200);
                    heap.changed(j);
                }
                String what = "seed " + seed + " step " + step;
                assertThat(heap.isEmpty()).as(what).isEqualTo(plain.isEmpty());
                if (plain.isEmpty()) continue;
                long earliest = plain.stream().mapToLong(j -> j.crossingMs).min().orElseThrow();
                assertThat(heap.first().crossingMs).as(what).isEqualTo(earliest);
                long bound = rnd.nextLong(-5, 260);
                List<Job> due = new ArrayList<>(List.of(new Job(-1)));   // what the list held before stays
                heap.collectDue(bound, due);
                assertThat(due.getFirst().crossingMs).isEqualTo(-1);
                Set<Job> expected = new HashSet<>();
                for (Job j : plain) if (j.crossingMs <= bound) expected.add(j);
                assertThat(due.subList(1, due.size())).as(what + " due by " + bound).doesNotHaveDuplicates().containsExactlyInAnyOrderElementsOf(expected);
            }
        }
    }
}
