package io.gpupool.optimize;

import io.gpupool.engine.placement.PlacementPipeline;
import io.gpupool.engine.placement.PlacementResult;
import io.gpupool.engine.state.Allocation;
import io.gpupool.engine.state.ClusterState;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Turns an order of jobs into a placement by asking the engine: each job in turn goes through
 * {@code PlacementPipeline.place} (filters, GPU policy, scorers, bind) on the cluster as the earlier jobs
 * left it, and is left out when it does not fit. Greedy, GA, ACO and PSO all search over orders and decode
 * them here, so their answers are the engine's own placements. The cluster is rolled back afterwards.
 */
final class EngineDecoder {
    private final BatchProblem p;
    private final PlacementPipeline pipeline;
    private final boolean[] failedClass;
    private long decodes;

    /** Decodes with the problem's own pipeline (the engine's configured scorers). */
    EngineDecoder(BatchProblem p) {
        this(p, p.pipeline());
    }

    /** Decodes with another pipeline over the same cluster (same filters and GPU rules, other scorers). */
    EngineDecoder(BatchProblem p, PlacementPipeline pipeline) {
        this.p = p;
        this.pipeline = pipeline;
        this.failedClass = new boolean[p.shapeClasses()];
    }

    /** One job of the window placed on the cluster as it stands: steered to its least contested model first when asked and possible. */
    static PlacementResult place(BatchProblem p, PlacementPipeline pipeline, int j, boolean steer) {
        PlacementResult r = steer && p.steerable(j) ? pipeline.place(p.steeredCycle(j), true) : null;
        return r == null || !r.ok() ? pipeline.place(p.cycle(j), true) : r;
    }

    /** The placement of the jobs in this order (indices into the window; jobs missing from it are left out). */
    Decoded decode(int[] order) {
        return decode(order, null);
    }

    /**
     * As {@link #decode(int[])}, but a job with {@code steer[j]} set is first tried on its least contested
     * GPU model only (see {@link BatchProblem}), and as itself when that does not fit.
     */
    Decoded decode(int[] order, boolean[] steer) {
        decodes++;
        ClusterState cluster = p.cluster();
        java.util.Arrays.fill(failedClass, false);
        Allocation[] byJob = new Allocation[p.size()];
        long value = 0;
        int mark = cluster.checkpoint();
        try {
            int failedClasses = 0;
            for (int j : order) {
                int c = p.shapeClass(j);
                // capacity only shrinks during a pass, so a class that failed once fails again
                if (failedClass[c]) continue;
                PlacementResult r = place(p, pipeline, j, steer != null && steer[j]);
                if (r.ok()) {
                    byJob[j] = r.allocation();
                    value += p.value(j);
                } else {
                    failedClass[c] = true;
                    if (++failedClasses == p.shapeClasses()) break;
                }
            }
        } finally {
            cluster.rollback(mark);
        }
        return new Decoded(byJob, value);
    }

    long decodes() {
        return decodes;
    }

    /** One decoded order: the allocation of each job (null = left out) and the value placed. */
    final class Decoded {
        final Allocation[] byJob;
        final long value;
        private Score score;

        Decoded(Allocation[] byJob, long value) {
            this.byJob = byJob;
            this.value = value;
        }

        Map<String, Allocation> placement() {
            Map<String, Allocation> m = new LinkedHashMap<>();
            for (int j = 0; j < byJob.length; j++) if (byJob[j] != null) m.put(p.job(j).id(), byJob[j]);
            return m;
        }

        Score score() {
            if (score == null) score = Score.of(p, placement());
            return score;
        }

        boolean placed(int j) {
            return byJob[j] != null;
        }
    }
}
