package io.gpupool.engine.round;

import io.gpupool.engine.state.ClusterState;
import io.gpupool.engine.status.Status;

import java.util.HashMap;
import java.util.Map;

/**
 * Shapes whose placement failed when the cluster was at one version, with the reason. While the state is unchanged
 * they fail again: a blocked head costs O(1) per round until capacity changes (long replays have millions of rounds
 * where only arrivals happen). Only for a pipeline whose answers depend on the cluster state alone.
 */
final class FailureMemo {
    private final Map<String, Status> blockedShapes = new HashMap<>();
    private long blockedAtVersion = -1;

    /** Why a job of this shape cannot be placed, if it already failed with the cluster in its current state. */
    Status knownFailure(ClusterState cluster, String shape) {
        return cluster.version() == blockedAtVersion ? blockedShapes.get(shape) : null;
    }

    void remember(ClusterState cluster, String shape, Status reason) {
        if (cluster.version() != blockedAtVersion) {
            blockedShapes.clear();
            blockedAtVersion = cluster.version();
        }
        blockedShapes.put(shape, reason);
    }

    /** A new configuration: nothing remembered holds any more. */
    void forget() {
        blockedAtVersion = -1;
    }
}
