package io.gpupool.engine.placement;

import io.gpupool.model.GpuShare;
import io.gpupool.model.JobSpec;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.constraints.IntRange;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The workload profile keeps the 12 most frequent shapes (counted per replica; ties: first seen first) with
 * weights proportional to their counts, after any sequence of observations and queries.
 */
class WorkloadProfilePropertyTest {
    /** An observed job: replicas x gpus whole GPUs, or (milli < 1000) one share. */
    record Seen(int replicas, int gpus, int milli) {}

    @Provide
    Arbitrary<List<Seen>> streams() {
        Arbitrary<Seen> whole = Combinators.combine(Arbitraries.integers().between(1, 3), Arbitraries.of(1, 2, 4, 8))
                .as((r, g) -> new Seen(r, g, 1000));
        Arbitrary<Seen> share = Arbitraries.integers().between(1, 40).map(m -> new Seen(1, 1, m * 25 - 1));
        return Arbitraries.oneOf(whole, share).list().ofMaxSize(300);
    }

    @Property(tries = 200, shrinking = ShrinkingMode.BOUNDED)
    void keepsTheTwelveMostFrequentShapesWithProportionalWeights(@ForAll("streams") List<Seen> stream, @ForAll @IntRange(min = 1, max = 50) int queryEvery) {
        WorkloadProfile p = new WorkloadProfile();
        Map<Long, Long> counts = new LinkedHashMap<>();
        int k = 0;
        for (Seen s : stream) {
            JobSpec.Builder b = JobSpec.builder("j" + k++).shape(s.replicas(), s.gpus());
            if (s.milli() < 1000) b.share(new GpuShare(s.milli(), 0));
            p.observe(b.build());
            counts.merge(((long) s.gpus() << 16) | s.milli(), (long) s.replicas(), Long::sum);
            if (k % queryEvery == 0) assertThat(p.shapes()).isEqualTo(reference(counts));
        }
        assertThat(p.shapes()).isEqualTo(reference(counts));
        assertThat(p.observed()).isEqualTo(counts.values().stream().mapToLong(Long::longValue).sum());
    }

    /** Stable sort by count, descending; the first 12; weights = count / sum of the kept counts. */
    static List<WorkloadProfile.Shape> reference(Map<Long, Long> counts) {
        List<Map.Entry<Long, Long>> es = new ArrayList<>(counts.entrySet());
        es.sort(Comparator.comparingLong((Map.Entry<Long, Long> e) -> e.getValue()).reversed());
        List<Map.Entry<Long, Long>> top = es.subList(0, Math.min(12, es.size()));
        long kept = top.stream().mapToLong(Map.Entry::getValue).sum();
        return top.stream().map(e -> new WorkloadProfile.Shape((int) (e.getKey() >>> 16), (int) (e.getKey() & 0xffff), e.getValue() / (double) kept)).toList();
    }
}
