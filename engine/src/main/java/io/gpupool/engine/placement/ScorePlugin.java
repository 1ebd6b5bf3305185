package io.gpupool.engine.placement;

import io.gpupool.engine.state.NodeState;

/**
 * Ranks feasible nodes for a replica, given the GPUs the GPU policy would take there. Returns a raw
 * score, higher is better; the pipeline rescales each plugin's scores over the candidates to 0..100
 * before weighting, so plugins need not agree on units.
 */
public interface ScorePlugin {
    String name();

    double score(CycleState cycle, ReplicaDemand demand, NodeState node, int[] gpus);

    /** Whether the candidates this plugin likes best are the tightly packed ones (index visit order). */
    default boolean prefersTightNodes() {
        return true;
    }

    /** Whether scores depend on the learned workload profile (so a placement may change when it does). */
    default boolean readsWorkloadProfile() {
        return false;
    }

    /** The GPU-level policy that suits this node policy when none is configured. */
    default String defaultGpuPolicy() {
        return "binpack";
    }
}
