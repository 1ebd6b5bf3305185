package io.gpupool.store;

/**
 * A tenant and its entitlement (weight, guaranteed minimum and hard limit in GPUs; 0 = none), and whether its jobs
 * may run on nodes where every job runs as the agent's own account ({@code sharedAccountNodes}).
 */
public record TenantRow(String name, double weight, double guaranteedGpus, double limitGpus, long createdMs, boolean sharedAccountNodes) {

    /** A tenant whose jobs run only on nodes that run them as their own accounts. */
    public TenantRow(String name, double weight, double guaranteedGpus, double limitGpus, long createdMs) {
        this(name, weight, guaranteedGpus, limitGpus, createdMs, false);
    }
}
