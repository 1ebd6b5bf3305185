package io.gpupool.engine.placement;

import io.gpupool.engine.state.NodeState;

/** Rejects nodes that cannot run a replica. Returns null to pass, or a short reason ("wrong GPU model"). */
public interface FilterPlugin {
    String name();

    String filter(CycleState cycle, ReplicaDemand demand, NodeState node);
}
