package io.gpupool.engine.policy;

/**
 * A policy that reads tenants' decayed usage ({@link io.gpupool.engine.TenantLedger#fairShareKey}) says how fast
 * past use fades; the ledger decays with the default half-life under other policies, whose decisions do not read it.
 */
public interface UsageHalfLife {
    /** Half-life of past usage in ms (0 = only what is held now counts). */
    long usageHalfLifeMs();
}
