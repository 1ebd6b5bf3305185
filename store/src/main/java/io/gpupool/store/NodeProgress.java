package io.gpupool.store;

/**
 * Where an agent node stands in the agent protocol.
 *
 * @param desiredVersion the version of the node's desired state (bumped whenever the attempts placed there change)
 * @param ackedStatusSeq the highest job status report seq applied from its agent (-1: none)
 * @param leaseEpoch     the node's lease epoch, raised whenever the server declares the node lost
 */
public record NodeProgress(String node, long desiredVersion, long ackedStatusSeq, long leaseEpoch) {
    public NodeProgress(String node, long desiredVersion, long ackedStatusSeq) {
        this(node, desiredVersion, ackedStatusSeq, 0);
    }
}
