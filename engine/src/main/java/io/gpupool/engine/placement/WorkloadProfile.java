package io.gpupool.engine.placement;

import io.gpupool.model.HostResources;
import io.gpupool.model.JobSpec;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The mix of task shapes the pool expects, which fragmentation-aware placement (FGD) measures
 * fragmentation against. Learned from submitted jobs; only the most frequent shapes are kept so the
 * score stays cheap.
 */
public final class WorkloadProfile {
    /**
     * A task shape: {@code gpus} whole GPUs, or (gpus == 1, milli < 1000) one share, on the GPU models
     * {@code models} (empty: any), with {@code host} CPU and memory on the node ({@link HostResources#NONE}:
     * none); weight = popularity.
     */
    public record Shape(int gpus, int milli, java.util.Set<String> models, HostResources host, double weight) {
        public Shape(int gpus, int milli, double weight) {
            this(gpus, milli, java.util.Set.of(), HostResources.NONE, weight);
        }

        public Shape(int gpus, int milli, java.util.Set<String> models, double weight) {
            this(gpus, milli, models, HostResources.NONE, weight);
        }

        /** Whether a task of this shape may run on GPUs of this model. */
        public boolean allows(String model) {
            return models.isEmpty() || models.contains(model);
        }
    }

    private record Key(int gpus, int milli, java.util.Set<String> models, HostResources host) {}

    private static final int MAX_SHAPES = 12;
    /**
     * Host requests multiply the distinct shapes (the openb default list has 24 GPU shapes but 126 with CPU and
     * memory; the 12 most common cover 98% of tasks without host requests, 68% with them), and a rare shape
     * (8 GPUs with 120 cores: only the largest hosts) is just the one whose nodes FGD must keep whole: with the
     * top 96 only, FGD spent those hosts' CPU on small tasks and refused two such tasks by 75% of openb's
     * inflation, where keeping all 126 refuses none. The bound only caps the cost of a pathological trace.
     */
    private static final int MAX_SHAPES_WITH_HOST = 256;
    private int maxShapes = MAX_SHAPES;
    private final Map<Key, long[]> counts = new LinkedHashMap<>();
    private final Map<String, long[]> byShapeKey = new java.util.IdentityHashMap<>();   // observe(job, key): each key's entry of counts
    private static final long[] NOT_COUNTED = new long[0];                        // a CPU-only shape
    private long total;
    private List<Shape> cached = List.of();
    private boolean dirty;

    /**
     * Counts the job's shape. A CPU-only job is not one of the GPU task shapes fragmentation is measured
     * against (it can use no GPU anywhere, so it would add the same term to every placement); it is left out.
     */
    public void observe(JobSpec job) {
        if (job.cpuOnly()) return;
        count(job, countOf(job));
    }

    /**
     * The same as {@link #observe(JobSpec)}, for a job whose shape the caller names with a string instance that only
     * jobs of one profile shape share (the engine's shape key, one instance per shape: every field the profile reads
     * is part of it): a shape seen before costs one identity look-up, where each job would make its demand and key again.
     */
    public void observe(JobSpec job, String shapeKey) {
        long[] c = byShapeKey.get(shapeKey);
        if (c == null) {
            c = job.cpuOnly() ? NOT_COUNTED : countOf(job);
            byShapeKey.put(shapeKey, c);
        }
        if (c != NOT_COUNTED) count(job, c);
    }

    /** The count of the job's shape (made when first seen, in order of first sight). */
    private long[] countOf(JobSpec job) {
        ReplicaDemand d = ReplicaDemand.of(job);
        int milli = d.exclusive() ? 1000 : d.milli();
        Key key = new Key(d.gpus(), milli, job.allowedModels(), job.host());
        if (job.host().requested()) maxShapes = MAX_SHAPES_WITH_HOST;
        return counts.computeIfAbsent(key, k -> new long[1]);
    }

    private void count(JobSpec job, long[] c) {
        c[0] += job.shape().replicas();
        total += job.shape().replicas();
        dirty = true;
    }

    /**
     * Shapes by popularity (ties: first seen first), weights summing to 1; empty before any job was seen.
     * Recomputed after each new observation by selecting the top {@value #MAX_SHAPES} ({@value #MAX_SHAPES_WITH_HOST}
     * once a job asked for host resources) in one pass (no sort):
     * FGD asks for it on every decision and a job arrives between most decisions.
     */
    public List<Shape> shapes() {
        if (!dirty) return cached;
        Key[] topKey = new Key[maxShapes];
        long[] topCount = new long[maxShapes];
        int size = 0;
        for (Map.Entry<Key, long[]> e : counts.entrySet()) {
            long c = e.getValue()[0];
            if (size == maxShapes && c <= topCount[size - 1]) continue;
            int at = size == maxShapes ? size - 1 : size++;
            while (at > 0 && topCount[at - 1] < c) {
                topKey[at] = topKey[at - 1];
                topCount[at] = topCount[at - 1];
                at--;
            }
            topKey[at] = e.getKey();
            topCount[at] = c;
        }
        long kept = 0;
        for (int i = 0; i < size; i++) kept += topCount[i];
        Shape[] out = new Shape[size];
        for (int i = 0; i < size; i++) out[i] = new Shape(topKey[i].gpus(), topKey[i].milli(), topKey[i].models(), topKey[i].host(),
                topCount[i] / (double) kept);
        cached = List.of(out);
        dirty = false;
        return cached;
    }

    public long observed() {
        return total;
    }
}
