package io.gpupool.engine.config;

import io.gpupool.engine.TenantConfig;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A {@link PoolConfig} as its tree of plain values (maps in the tree's key order, lists, numbers, text), ready for a
 * JSON or YAML writer: every part spelled out in its long form, so that it shows the whole configuration in force
 * and {@link PoolConfigReader} reads it back to an equal config.
 */
public final class PoolConfigWriter {
    private PoolConfigWriter() {}

    public static Map<String, Object> toMap(PoolConfig c) {
        Map<String, Object> out = new LinkedHashMap<>();
        Map<String, Object> policy = new LinkedHashMap<>();
        policy.put("name", c.policy().name());
        policy.put("args", c.policy().argsMap());
        out.put("policy", policy);
        Map<String, Object> placement = new LinkedHashMap<>();
        placement.put("scorers", new LinkedHashMap<>(c.placement().scorerWeights()));
        placement.put("gpuPolicy", c.placement().gpuPolicy());
        placement.put("candidateLimit", c.placement().candidateLimit());
        out.put("placement", placement);
        out.put("tenants", tenants(c.tenants()));
        if (c.predictor() != null) out.put("predictor", Map.of("name", c.predictor().name()));
        out.put("defaultRuntime", Durations.format(c.defaultRuntimeMs()));
        return out;
    }

    /** Tenants as the tree writes them: name -> {weight, guaranteedGpus, limitGpus}. */
    public static Map<String, Object> tenants(Map<String, TenantConfig> tenants) {
        Map<String, Object> out = new LinkedHashMap<>();
        tenants.forEach((name, t) -> {
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("weight", t.weight());
            e.put("guaranteedGpus", t.guaranteedGpus());
            e.put("limitGpus", t.limitGpus());
            out.put(name, e);
        });
        return out;
    }
}
