package io.gpupool.optimize;

import io.gpupool.engine.placement.PlacementResult;
import io.gpupool.engine.state.Allocation;
import io.gpupool.engine.state.ClusterState;

import java.util.Map;

/**
 * The engine's own verdict on an answer: every allocation is bound, one after the other, through
 * {@code PlacementPipeline.placeGiven} (the pipeline's filters and GPU rules, then the cluster state's
 * capacity checks) inside one checkpoint that is then rolled back. Nothing else decides feasibility.
 */
public final class EngineCheck {
    private EngineCheck() {}

    /** Null when the engine accepts all allocations together, else the first reason it gives. */
    public static String verify(BatchProblem p, Map<String, Allocation> placement) {
        ClusterState cluster = p.cluster();
        int mark = cluster.checkpoint();
        try {
            for (Map.Entry<String, Allocation> e : placement.entrySet()) {
                int j = p.indexOf(e.getKey());
                if (j < 0) return "job " + e.getKey() + " is not in the batch";
                if (!e.getValue().jobId().equals(e.getKey())) return "allocation of " + e.getValue().jobId() + " filed under " + e.getKey();
                PlacementResult r = p.pipeline().placeGiven(p.cycle(j), e.getValue(), true);
                if (!r.ok()) return r.reason();
            }
            return null;
        } finally {
            cluster.rollback(mark);
        }
    }

    /**
     * The allocations as the engine grants them (compute and memory filled in by the pipeline) for an answer
     * that names only nodes and GPUs. Throws when the engine does not accept it: a solver bug, never bad input.
     */
    static Map<String, Allocation> rebuild(String solver, BatchProblem p, Map<String, Allocation> placement) {
        ClusterState cluster = p.cluster();
        Map<String, Allocation> out = new java.util.LinkedHashMap<>();
        int mark = cluster.checkpoint();
        try {
            for (Map.Entry<String, Allocation> e : placement.entrySet()) {
                PlacementResult r = p.pipeline().placeGiven(p.cycle(p.indexOf(e.getKey())), e.getValue(), true);
                if (!r.ok()) throw new IllegalStateException(solver + " produced a placement the engine rejects: " + r.reason());
                out.put(e.getKey(), r.allocation());
            }
            return out;
        } finally {
            cluster.rollback(mark);
        }
    }
}
