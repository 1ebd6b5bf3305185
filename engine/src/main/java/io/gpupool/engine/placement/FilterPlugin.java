package io.gpupool.engine.placement;

import io.gpupool.engine.state.NodeState;
import io.gpupool.engine.status.Status;

/**
 * Rejects nodes that cannot run a replica. Returns null to pass, or why not: a {@link Status} whose plugin is
 * this filter's name, whose code says whether the node could take the replica later ({@code UNSCHEDULABLE}) or
 * never ({@code UNRESOLVABLE}), and whose message is short and names no amounts ("insufficient host CPU"), as
 * a failed placement counts nodes per message.
 */
public interface FilterPlugin {
    String name();

    Status filter(CycleState cycle, ReplicaDemand demand, NodeState node);
}
