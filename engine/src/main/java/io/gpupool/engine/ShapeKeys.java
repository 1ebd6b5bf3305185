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
    /**
     * The fields the key is made of (host included even when not asked for: it is then always NONE), compared as
     * numbers (a record's equals goes through the equals of each part) and the model set by identity first (most
     * specs share the empty set).
     */
    private static final class Fields {
        final int replicas, perReplica, milli;
        final long memoryMib, cpuMilli, hostMemoryMib;
        final boolean requireNvlink;
        final Set<String> models;
        final int hash;

        Fields(JobSpec s) {
            GangShape g = s.shape();
            GpuShare share = s.share();
            HostResources h = s.host();
            replicas = g.replicas();
            perReplica = g.gpusPerReplica();
            milli = share.milli();
            memoryMib = share.memoryMib();
            cpuMilli = h.cpuMilli();
            hostMemoryMib = h.memoryMib();
            requireNvlink = s.requireNvlink();
            models = s.allowedModels();
            int x = ((replicas * 31 + perReplica) * 31 + milli) * 31 + Long.hashCode(memoryMib);
            x = ((x * 31 + Long.hashCode(cpuMilli)) * 31 + Long.hashCode(hostMemoryMib)) * 31 + (requireNvlink ? 1 : 0);
            hash = x * 31 + models.hashCode();
        }

        @Override public int hashCode() { return hash; }

        @Override
        public boolean equals(Object o) {
            return o instanceof Fields f && hash == f.hash && replicas == f.replicas && perReplica == f.perReplica
                    && milli == f.milli && memoryMib == f.memoryMib && cpuMilli == f.cpuMilli
                    && hostMemoryMib == f.hostMemoryMib && requireNvlink == f.requireNvlink
                    && (models == f.models || models.equals(f.models));
        }
    }

    private final Map<Fields, String> byFields = new HashMap<>();

    /** The shared key of the job's shape. */
    String of(JobSpec s) {
        Fields f = new Fields(s);
        String key = byFields.get(f);
        if (key == null) {
            key = JobState.shapeKeyOf(s);
            byFields.put(f, key);
        }
        return key;
    }
}
