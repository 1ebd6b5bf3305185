package io.gpupool.engine.placement;

import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link CycleState#excluded} answers from bit masks per node ({@link GpuMasks}), made at the first question or
 * handed in: over random sets of
 * excluded GPUs and of the only GPUs allowed (none, empty, GPUs past 63 on some nodes), every node and GPU gets the
 * answer the sets give by their definition (excluded, or not among the only ones).
 */
class CycleStateExclusionTest {

    @Test
    void masksAnswerAsTheSetsDo() {
        int limited = 0, free = 0;
        for (long seed = 1; seed <= 300; seed++) {
            SplittableRandom rnd = new SplittableRandom(seed);
            int nodes = rnd.nextInt(1, 200), gpus = rnd.nextInt(3) == 0 ? 80 : 8;   // 80: keys past bit 63
            Set<Long> excluded = randomGpus(rnd, nodes, gpus);
            Set<Long> only = rnd.nextInt(3) == 0 ? null : randomGpus(rnd, nodes, gpus);
            CycleState cycle = new CycleState(null, null, null, excluded, only);
            // the masks made once and handed to the placement, as a round does for its backfill candidates
            CycleState given = new CycleState(null, null, null, excluded, only, GpuMasks.of(excluded, only));
            for (int n = 0; n < nodes; n++) {
                for (int g = 0; g < gpus; g++) {
                    long key = CycleState.gpuKey(n, g);
                    boolean expected = excluded.contains(key) || (only != null && !only.contains(key));
                    assertThat(cycle.excluded(n, g)).as("seed %d node %d GPU %d", seed, n, g).isEqualTo(expected);
                    assertThat(given.excluded(n, g)).as("seed %d node %d GPU %d, masks given", seed, n, g).isEqualTo(expected);
                    if (expected) limited++;
                    else free++;
                }
            }
        }
        assertThat(limited).isGreaterThan(10_000);
        assertThat(free).isGreaterThan(10_000);
    }

    private static Set<Long> randomGpus(SplittableRandom rnd, int nodes, int gpus) {
        Set<Long> set = new HashSet<>();
        int count = rnd.nextInt(4) == 0 ? 0 : rnd.nextInt(1, 4 * gpus);
        for (int i = 0; i < count; i++) set.add(CycleState.gpuKey(rnd.nextInt(nodes), rnd.nextInt(gpus)));
        return set;
    }
}
