package io.gpupool.store;

/**
 * Where an agent node stands in the agent protocol.
 *
 * @param desiredVersion the version of the node's desired state (bumped whenever the attempts placed there change)
 * @param ackedStatusSeq the highest job status report seq applied from its agent (-1: none)
 */
public record NodeProgress(String node, long desiredVersion, long ackedStatusSeq) {
}
