package io.gpupool.optimize;

import io.gpupool.engine.placement.PlacementResult;
import io.gpupool.engine.state.Allocation;
import io.gpupool.engine.state.ClusterState;
import io.gpupool.engine.state.GpuGrant;
import io.gpupool.engine.state.NodeState;

import java.util.ArrayList;
import java.util.List;

/**
 * The best value over every placement the engine accepts, by enumeration: each job is left out or placed
 * with every choice of node and GPU set for each replica, each choice bound through the engine's
 * {@code placeGiven} inside a checkpoint. Exponential: for the small instances of the property tests only.
 */
final class BruteForce {
    private final BatchProblem p;
    private final ClusterState cluster;
    private long best;

    private BruteForce(BatchProblem p) {
        this.p = p;
        this.cluster = p.cluster();
    }

    static long bestValue(BatchProblem p) {
        BruteForce b = new BruteForce(p);
        b.search(0, 0);
        return b.best;
    }

    private void search(int j, long value) {
        if (j == p.size()) {
            best = Math.max(best, value);
            return;
        }
        search(j + 1, value);   // leave job j out
        placeReplicas(j, 0, new ArrayList<>(), value);
    }

    /** Tries every node and GPU set for replica r of job j, given the replicas chosen so far. */
    private void placeReplicas(int j, int r, List<List<GpuGrant>> chosen, long value) {
        int replicas = p.job(j).shape().replicas();
        if (r == replicas) {
            int mark = cluster.checkpoint();
            PlacementResult res = p.pipeline().placeGiven(p.cycle(j), new Allocation(p.job(j).id(), chosen), true);
            if (res.ok()) search(j + 1, value + p.value(j));
            cluster.rollback(mark);
            return;
        }
        int k = p.job(j).shape().gpusPerReplica();
        for (NodeState n : cluster.nodes()) {
            for (int[] gpus : subsets(n.gpuCount(), k)) {
                List<GpuGrant> rep = new ArrayList<>();
                for (int g : gpus) rep.add(new GpuGrant(n.id(), g, 0, 0, false));
                chosen.add(rep);
                placeReplicas(j, r + 1, chosen, value);
                chosen.removeLast();
            }
        }
    }

    private static List<int[]> subsets(int n, int k) {
        List<int[]> out = new ArrayList<>();
        collect(n, k, 0, new int[k], 0, out);
        return out;
    }

    private static void collect(int n, int k, int from, int[] cur, int size, List<int[]> out) {
        if (size == k) {
            out.add(cur.clone());
            return;
        }
        for (int g = from; g < n; g++) {
            cur[size] = g;
            collect(n, k, g + 1, cur, size + 1, out);
        }
    }
}
