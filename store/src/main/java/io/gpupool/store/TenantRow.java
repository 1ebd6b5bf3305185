package io.gpupool.store;

/**
 * A tenant and its entitlement (weight, guaranteed minimum and hard limit in GPUs; 0 = none), whether its jobs
 * may run on nodes where every job runs as the agent's own account ({@code sharedAccountNodes}), and the time limit its
 * jobs get when they ask for none and the most they may ask for (seconds; 0 = none).
 */
public record TenantRow(String name, double weight, double guaranteedGpus, double limitGpus, long createdMs, boolean sharedAccountNodes,
                        long defaultTimeLimitSec, long maxTimeLimitSec) {

    /** A tenant without time limits. */
    public TenantRow(String name, double weight, double guaranteedGpus, double limitGpus, long createdMs, boolean sharedAccountNodes) {
        this(name, weight, guaranteedGpus, limitGpus, createdMs, sharedAccountNodes, 0, 0);
    }

    /** A tenant whose jobs run only on nodes that run them as their own accounts. */
    public TenantRow(String name, double weight, double guaranteedGpus, double limitGpus, long createdMs) {
        this(name, weight, guaranteedGpus, limitGpus, createdMs, false);
    }
}
