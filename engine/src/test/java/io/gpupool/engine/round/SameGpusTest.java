package io.gpupool.engine.round;

import io.gpupool.engine.placement.CycleState;
import io.gpupool.engine.state.GpuGrant;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A reservation reuses the remembered GPU set only when the set its grants make would equal it, and always when
 * they name distinct GPUs: over random grants on few GPUs (so that sets coincide often), with shares of one GPU
 * granted twice (a whole GPU is granted once, as in any placement).
 */
class SameGpusTest {
    @Test
    void reusesTheRememberedSetExactlyWhenTheGrantsMakeAnEqualSet() {
        int reused = 0;
        for (long seed = 1; seed <= 5000; seed++) {
            SplittableRandom rnd = new SplittableRandom(seed);
            Set<Long> remembered = rnd.nextInt(10) == 0 ? null : keys(grants(rnd));
            List<GpuGrant> grants = grants(rnd);
            Set<Long> made = keys(grants);
            Set<Long> same = ReservationMemo.sameGpus(remembered, grants);
            if (!made.equals(remembered)) {
                assertThat(same).as("seed %d", seed).isNull();
            } else if (made.size() == grants.size()) {
                assertThat(same).as("seed %d", seed).isSameAs(remembered);
                reused++;
            } else {
                // two shares of one GPU: not reused, a new (equal) set is built, which remember() then swaps for this one
                assertThat(same).as("seed %d", seed).isNull();
            }
        }
        assertThat(reused).isGreaterThan(50);   // the reuse case is exercised, not only the refusals
    }

    /** Grants as a placement makes them: a whole GPU at most once, a GPU with shares possibly twice, never both. */
    private static List<GpuGrant> grants(SplittableRandom rnd) {
        List<GpuGrant> out = new ArrayList<>();
        Set<Long> whole = new HashSet<>(), shared = new HashSet<>();
        for (int k = rnd.nextInt(1, 5); k > 0; k--) {
            boolean share = rnd.nextInt(3) == 0;
            int node = rnd.nextInt(2), gpu = rnd.nextInt(3);
            long key = CycleState.gpuKey(node, gpu);
            if (whole.contains(key) || (!share && shared.contains(key))) continue;
            (share ? shared : whole).add(key);
            out.add(new GpuGrant(node, gpu, share ? 500 : 1000, 0, !share));
        }
        if (out.isEmpty()) out.add(new GpuGrant(0, 0, 1000, 0, true));
        return out;
    }

    private static Set<Long> keys(List<GpuGrant> grants) {
        Set<Long> s = new HashSet<>();
        for (GpuGrant g : grants) s.add(CycleState.gpuKey(g.node(), g.gpu()));
        return s;
    }
}
