package io.gpupool.engine.placement;

import io.gpupool.engine.state.Allocation;

/** Either the GPUs a job got, or why it got none (naming the replica and what the nodes lacked). */
public record PlacementResult(Allocation allocation, String reason) {
    public static PlacementResult placed(Allocation a) { return new PlacementResult(a, null); }

    public static PlacementResult failed(String reason) { return new PlacementResult(null, reason); }

    public boolean ok() { return allocation != null; }
}
