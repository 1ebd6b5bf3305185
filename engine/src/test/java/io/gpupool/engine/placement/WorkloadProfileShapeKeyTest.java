package io.gpupool.engine.placement;

import io.gpupool.model.GpuShare;
import io.gpupool.model.JobSpec;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Observing with the engine's shape key (one string instance per shape, the memo of the shape's count) learns the same
 * profile as observing each job on its own: over random streams of shapes, keys of one profile shape (they differ in
 * fields the profile does not read: NVLink, a whole GPU's memory), CPU-only jobs (not counted) and host requests.
 */
class WorkloadProfileShapeKeyTest {
    private static JobSpec spec(SplittableRandom rnd, int i) {
        JobSpec.Builder b = JobSpec.builder("j" + i);
        switch (rnd.nextInt(6)) {
            case 0 -> b.shape(1 + rnd.nextInt(3), 1 << rnd.nextInt(4));
            case 1 -> b.shape(1, 1).share(new GpuShare(250 * (1 + rnd.nextInt(3)), rnd.nextBoolean() ? 0 : 4096));
            case 2 -> b.shape(1, 2).requireNvlink(rnd.nextBoolean());
            case 3 -> b.shape(1, 2).allowedModels(rnd.nextBoolean() ? Set.of("V100-32GB") : Set.of("A100-80GB", "V100-32GB"));
            case 4 -> b.shape(1, 0).host(1000, 2048);   // CPU-only: not counted
            default -> b.shape(1, 1).host(1000L * (1 + rnd.nextInt(2)), 4096);
        }
        return b.build();
    }

    /** The key the engine would give: one instance per distinct text (the fields here never print alike). */
    private static String key(JobSpec s, List<String> seen) {
        String text = s.shape() + "/" + s.share() + "/" + s.requireNvlink() + "/" + new java.util.TreeSet<>(s.allowedModels()) + "/" + s.host();
        for (String k : seen) if (k.equals(text)) return k;
        seen.add(text);
        return text;
    }

    @Test
    void keyedObservationsLearnTheSameProfile() {
        for (long seed = 1; seed <= 40; seed++) {
            SplittableRandom rnd = new SplittableRandom(seed);
            WorkloadProfile plain = new WorkloadProfile(), keyed = new WorkloadProfile();
            List<String> seen = new ArrayList<>();
            for (int i = 0; i < 300; i++) {
                JobSpec s = spec(rnd, i);
                plain.observe(s);
                keyed.observe(s, key(s, seen));
                if (rnd.nextInt(10) == 0) {
                    assertThat(keyed.shapes()).as("seed %d job %d", seed, i).isEqualTo(plain.shapes());
                    assertThat(keyed.observed()).isEqualTo(plain.observed());
                }
            }
            assertThat(keyed.shapes()).as("seed %d", seed).isEqualTo(plain.shapes());
            assertThat(keyed.observed()).isEqualTo(plain.observed());
        }
    }
}
