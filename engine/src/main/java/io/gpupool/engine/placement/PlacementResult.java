package io.gpupool.engine.placement;

import io.gpupool.engine.state.Allocation;
import io.gpupool.engine.status.Status;

/** Either the GPUs a job got, or why it got none (naming the replica and what the nodes lacked). */
public record PlacementResult(Allocation allocation, Status status) {
    public static PlacementResult placed(Allocation a) { return new PlacementResult(a, null); }

    public static PlacementResult failed(Status why) { return new PlacementResult(null, java.util.Objects.requireNonNull(why)); }

    public boolean ok() { return allocation != null; }

    /** Why it failed, in English ({@link Status#message()}); null when placed. */
    public String reason() { return status == null ? null : status.message(); }
}
