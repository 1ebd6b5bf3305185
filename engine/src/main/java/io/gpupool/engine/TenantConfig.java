package io.gpupool.engine;

import io.gpupool.model.SpecException;

/**
 * A tenant's entitlement.
 *
 * @param name           tenant name
 * @param weight         fair-share weight (> 0): a tenant with weight 2 is entitled to twice the share
 * @param guaranteedGpus GPUs the tenant can always reclaim (by preempting borrowers); 0 = none
 * @param limitGpus      hard cap on GPUs held at once; 0 = no cap
 */
public record TenantConfig(String name, double weight, double guaranteedGpus, double limitGpus) {
    public TenantConfig {
        String where = "tenant " + name;
        if (name == null || name.isBlank()) throw new SpecException("tenant", "name", "must not be empty");
        if (!(weight > 0)) throw new SpecException(where, "weight", "must be > 0, got " + weight);
        if (guaranteedGpus < 0) throw new SpecException(where, "guaranteed_gpus", "must be >= 0");
        if (limitGpus < 0) throw new SpecException(where, "limit_gpus", "must be >= 0");
        if (limitGpus > 0 && guaranteedGpus > limitGpus) {
            throw new SpecException(where, "guaranteed_gpus", "guarantee " + guaranteedGpus + " exceeds the limit " + limitGpus);
        }
    }

    public static TenantConfig defaultFor(String name) {
        return new TenantConfig(name, 1.0, 0, 0);
    }

    public boolean hasLimit() {
        return limitGpus > 0;
    }
}
