package io.gpupool.engine.status;

/**
 * How many nodes refused a replica for one reason (kube-scheduler's "3 Insufficient nvidia.com/gpu"):
 * {@code reason} is one of those nodes' refusals, with {@code free} the most any of them had free and
 * {@code capacity} the largest capacity among them.
 */
public record NodeCount(Status reason, int nodes) {
    public NodeCount {
        if (nodes < 1) throw new IllegalArgumentException("a reason counts at least one node, got " + nodes);
    }
}
