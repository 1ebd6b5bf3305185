package io.gpupool.engine.round;

import io.gpupool.engine.state.ClusterState;
import io.gpupool.engine.status.Status;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * Shapes whose placement failed when the cluster was at one version, with the reason: placed on all GPUs, and placed
 * outside one set of excluded GPUs (a backfill behind the current EASY reservation). While the state is unchanged
 * they fail again: a blocked head, and the backfill candidates behind it, cost O(1) per round until capacity changes
 * (long replays have millions of rounds where only arrivals happen). Only for a pipeline whose answers depend on the
 * cluster state alone.
 */
final class FailureMemo {
    private final Map<String, Status> blockedShapes = new HashMap<>();
    private final Map<String, Status> blockedOutside = new HashMap<>();
    private Set<Long> excluded;   // the GPUs blockedOutside's placements left out, compared by identity (ReservationMemo keeps one set while it is equal)
    private long blockedAtVersion = -1;

    /** Why a job of this shape cannot be placed (outside {@code excluded} GPUs, or anywhere when null), if it already failed with the cluster in its current state. */
    Status knownFailure(ClusterState cluster, String shape, Set<Long> excluded) {
        if (cluster.version() != blockedAtVersion) return null;
        if (excluded == null) return blockedShapes.get(shape);
        return excluded == this.excluded ? blockedOutside.get(shape) : null;
    }

    void remember(ClusterState cluster, String shape, Set<Long> excluded, Status reason) {
        if (cluster.version() != blockedAtVersion) {
            blockedShapes.clear();
            blockedOutside.clear();
            this.excluded = null;
            blockedAtVersion = cluster.version();
        }
        if (excluded == null) {
            blockedShapes.put(shape, reason);
            return;
        }
        if (excluded != this.excluded) {
            blockedOutside.clear();
            this.excluded = excluded;
        }
        blockedOutside.put(shape, reason);
    }

    /** A new configuration: nothing remembered holds any more. */
    void forget() {
        blockedAtVersion = -1;
    }
}
