package io.gpupool.engine.placement;

import io.gpupool.engine.state.NodeState;

/**
 * GPU-level policy (as HAMi separates node and GPU policy): which GPUs of a chosen node a replica takes.
 * Returns the GPU indices, or null when the node cannot hold the replica. Must honour every capacity rule.
 */
public interface GpuSelector {
    String name();

    int[] select(CycleState cycle, ReplicaDemand demand, NodeState node);

    /** Whether the choice depends on the learned workload profile (so a placement may change when it does). */
    default boolean readsWorkloadProfile() {
        return false;
    }
}
