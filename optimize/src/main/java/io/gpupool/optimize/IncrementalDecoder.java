package io.gpupool.optimize;

import io.gpupool.engine.placement.CycleState;
import io.gpupool.engine.placement.PlacementPipeline;
import io.gpupool.engine.placement.PlacementResult;
import io.gpupool.engine.state.Allocation;
import io.gpupool.engine.state.ClusterState;
import io.gpupool.engine.state.NodeState;

import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * Decodes orders as {@link EngineDecoder} does (each job in turn through {@code PlacementPipeline.place},
 * left out when it does not fit, a failed job class skipped for the rest of the pass), but keeps the last
 * decoded order applied to the cluster, one nested checkpoint per position. The next order is decoded from
 * the first position where it differs from the last one: the placements before it are kept, those after it
 * are rolled back. A local search move that changes an order late is therefore cheap. The placements are
 * the engine's own, exactly as a full decode gives them.
 *
 * <p>While open it holds the cluster changed; {@link #close()} rolls everything back. Nothing else may use
 * the cluster meanwhile.
 */
final class IncrementalDecoder implements AutoCloseable {
    private final BatchProblem p;
    private final PlacementPipeline pipeline;
    private final ClusterState cluster;
    private final Set<Long> fullyFreeAtStart = new HashSet<>();
    private final int n;
    private final int[] order;
    private final boolean[] steer;
    private final int[] marks;            // cluster mark taken before position i was placed
    private final long[] valueBefore;     // value placed by positions < i
    private final int[] failedAt;         // per shape class: the position where it first failed, or MAX_VALUE
    private final Allocation[] byJob;
    private int applied;                  // positions processed (and checkpointed) so far
    private boolean empty = true;         // nothing decoded yet

    IncrementalDecoder(BatchProblem p) {
        this.p = p;
        this.pipeline = p.pipeline();
        this.cluster = p.cluster();
        this.n = p.size();
        for (NodeState node : cluster.nodes()) {
            for (int g = 0; g < node.gpuCount(); g++) if (node.isFullyFree(g)) fullyFreeAtStart.add(CycleState.gpuKey(node.id(), g));
        }
        order = new int[n];
        steer = new boolean[n];
        marks = new int[n + 1];
        valueBefore = new long[n + 1];
        failedAt = new int[p.shapeClasses()];
        Arrays.fill(failedAt, Integer.MAX_VALUE);
        byJob = new Allocation[n];
    }

    /** The placement of this order (every job of the window once) with this steering; see {@link EngineDecoder#decode(int[], boolean[])}. */
    Result decode(int[] newOrder, boolean[] newSteer) {
        int from = 0;
        if (!empty) {
            while (from < applied && newOrder[from] == order[from] && newSteer[newOrder[from]] == steer[newOrder[from]]) from++;
        }
        rollbackTo(from);
        System.arraycopy(newOrder, 0, order, 0, n);
        System.arraycopy(newSteer, 0, steer, 0, n);
        empty = false;
        long value = valueBefore[from];
        int failedClasses = 0;
        for (int c : failedAt) if (c < from) failedClasses++;
        int pos = from;
        for (; pos < n && failedClasses < failedAt.length; pos++) {
            marks[pos] = cluster.checkpoint();
            valueBefore[pos] = value;
            int j = order[pos];
            int c = p.shapeClass(j);
            if (failedAt[c] < pos) continue;    // capacity only shrinks during a pass
            PlacementResult r = EngineDecoder.place(p, pipeline, j, steer[j]);
            if (r.ok()) {
                byJob[j] = r.allocation();
                value += p.value(j);
            } else {
                failedAt[c] = pos;
                failedClasses++;
            }
        }
        applied = pos;
        valueBefore[pos] = value;
        return new Result(value);
    }

    /** Undoes positions from {@code from} on, newest first (each closes its own nested checkpoint). */
    private void rollbackTo(int from) {
        for (int pos = applied - 1; pos >= from; pos--) {
            cluster.rollback(marks[pos]);
            byJob[order[pos]] = null;
        }
        for (int c = 0; c < failedAt.length; c++) if (failedAt[c] >= from) failedAt[c] = Integer.MAX_VALUE;
        applied = Math.min(applied, from);
    }

    /** Rolls the cluster back to how it was found. */
    @Override
    public void close() {
        rollbackTo(0);
    }

    /** The last decoded order's outcome; valid until the next decode. */
    final class Result {
        final long value;
        private Score score;

        private Result(long value) {
            this.value = value;
        }

        boolean placed(int j) {
            return byJob[j] != null;
        }

        /** The full objective, scored against the cluster as it was before the batch (computed on demand). */
        Score score() {
            if (score == null) score = Score.of(p, placement(), (node, gpu) -> fullyFreeAtStart.contains(CycleState.gpuKey(node, gpu)));
            return score;
        }

        Map<String, Allocation> placement() {
            Map<String, Allocation> m = new LinkedHashMap<>();
            for (int j = 0; j < n; j++) if (byJob[j] != null) m.put(p.job(j).id(), byJob[j]);
            return m;
        }
    }
}
