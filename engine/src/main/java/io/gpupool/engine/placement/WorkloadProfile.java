package io.gpupool.engine.placement;

import io.gpupool.model.JobSpec;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The mix of task shapes the pool expects, which fragmentation-aware placement (FGD) measures
 * fragmentation against. Learned from submitted jobs; only the most frequent shapes are kept so the
 * score stays cheap.
 */
public final class WorkloadProfile {
    /** A task shape: {@code gpus} whole GPUs, or (gpus == 1, milli < 1000) one share; weight = popularity. */
    public record Shape(int gpus, int milli, double weight) {}

    private static final int MAX_SHAPES = 12;
    private final Map<Long, long[]> counts = new LinkedHashMap<>();
    private long total;
    private List<Shape> cached = List.of();
    private boolean dirty;

    public void observe(JobSpec job) {
        ReplicaDemand d = ReplicaDemand.of(job);
        int milli = d.exclusive() ? 1000 : d.milli();
        long key = ((long) d.gpus() << 16) | milli;
        counts.computeIfAbsent(key, k -> new long[1])[0] += job.shape().replicas();
        total += job.shape().replicas();
        dirty = true;
    }

    /** Shapes by popularity, weights summing to 1; empty before any job was seen. */
    public List<Shape> shapes() {
        if (!dirty) return cached;
        List<Map.Entry<Long, long[]>> es = new ArrayList<>(counts.entrySet());
        es.sort((a, b) -> Long.compare(b.getValue()[0], a.getValue()[0]));
        List<Shape> out = new ArrayList<>();
        long kept = 0;
        for (int i = 0; i < Math.min(MAX_SHAPES, es.size()); i++) kept += es.get(i).getValue()[0];
        for (int i = 0; i < Math.min(MAX_SHAPES, es.size()); i++) {
            long key = es.get(i).getKey();
            out.add(new Shape((int) (key >>> 16), (int) (key & 0xffff), es.get(i).getValue()[0] / (double) kept));
        }
        cached = List.copyOf(out);
        dirty = false;
        return cached;
    }

    public long observed() {
        return total;
    }
}
