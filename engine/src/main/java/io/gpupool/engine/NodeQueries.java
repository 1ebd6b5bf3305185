package io.gpupool.engine;

import io.gpupool.engine.placement.CycleState;
import io.gpupool.engine.placement.PlacementPipeline;
import io.gpupool.engine.placement.WorkloadProfile;
import io.gpupool.engine.state.ClusterState;
import io.gpupool.engine.state.NodeState;
import io.gpupool.model.JobSpec;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Questions a driver that does not own the choice of node (kube-scheduler's extender) asks about given nodes, for
 * one replica of a job that is not queued: which nodes could take it and how good each is, and whether a node
 * could take it once some running jobs were gone. Answered on the live state; what-ifs are rolled back.
 */
final class NodeQueries {
    private NodeQueries() {}

    /** The nodes (of those given and known) that can hold one replica now, with scores 0..maxScore over them. */
    static Map<String, Long> filterAndScore(ClusterState cluster, PlacementPipeline pipeline, WorkloadProfile profile,
                                            JobSpec job, List<String> nodeNames, long maxScore) {
        CycleState filter = new CycleState(cluster, job, profile, null);
        List<String> names = new ArrayList<>();
        List<NodeState> nodes = new ArrayList<>();
        for (String name : nodeNames) {
            Integer id = cluster.nodeId(name);
            if (id == null || pipeline.filterNode(filter, cluster.node(id)) != null) continue;
            names.add(name);
            nodes.add(cluster.node(id));
        }
        Map<String, Long> scores = new LinkedHashMap<>();
        if (nodes.isEmpty()) return scores;
        double[] s = pipeline.scoreNodes(new CycleState(cluster, job, profile, null), nodes);
        double min = Double.MAX_VALUE, max = -Double.MAX_VALUE;
        for (double v : s) { min = Math.min(min, v); max = Math.max(max, v); }
        for (int i = 0; i < s.length; i++) {
            // the best node gets maxScore, the worst 0; all get maxScore when they score alike
            long v = max - min < 1e-9 ? maxScore : Math.round(maxScore * (s[i] - min) / (max - min));
            scores.put(names.get(i), v);
        }
        return scores;
    }

    /** Whether one replica fits on the node with the given running jobs' GPUs released (jobs not running are ignored). */
    static boolean fitsWithout(ClusterState cluster, PlacementPipeline pipeline, WorkloadProfile profile, JobSpec job,
                               int node, Collection<JobState> gone) {
        int mark = cluster.checkpoint();
        try {
            for (JobState j : gone) if (j.status() == JobStatus.RUNNING) cluster.release(j.allocation());
            return pipeline.filterNode(new CycleState(cluster, job, profile, null), cluster.node(node)) == null;
        } finally {
            cluster.rollback(mark);
        }
    }
}
