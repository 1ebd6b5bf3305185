package io.gpupool.engine;

import io.gpupool.model.GangShape;
import io.gpupool.model.GpuShare;
import io.gpupool.model.HostResources;
import io.gpupool.model.JobSpec;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * One string per job shape ({@link JobState#shapeKey}), shared by all jobs of the shape so that memos keyed on it
 * compare by identity first. Found by the shape's fields: a submit of a shape seen before builds no string. Distinct
 * fields get distinct strings even where their texts are equal (model sets {"a, b"} and {"a", "b"} print alike), so
 * that the workload profile may tell shapes apart by identity ({@link io.gpupool.engine.placement.WorkloadProfile#observe(JobSpec, String)}).
 */
final class ShapeKeys {
    /** The fields the key is made of (host included even when not asked for: it is then always NONE). */
    private record Fields(GangShape shape, GpuShare share, boolean requireNvlink, Set<String> allowedModels, HostResources host) {}

    private final Map<Fields, String> byFields = new HashMap<>();

    /** The shared key of the job's shape. */
    String of(JobSpec s) {
        Fields f = new Fields(s.shape(), s.share(), s.requireNvlink(), s.allowedModels(), s.host());
        String key = byFields.get(f);
        if (key == null) {
            key = JobState.shapeKeyOf(s);
            byFields.put(f, key);
        }
        return key;
    }
}
