package io.gpupool.store;

/** A tenant and its entitlement (weight, guaranteed minimum and hard limit in GPUs; 0 = none). */
public record TenantRow(String name, double weight, double guaranteedGpus, double limitGpus, long createdMs) {
}
