package io.gpupool.engine;

import io.gpupool.engine.placement.CycleState;
import io.gpupool.engine.placement.PlacementPipeline;
import io.gpupool.engine.placement.WorkloadProfile;
import io.gpupool.engine.policy.PolicyContext;
import io.gpupool.engine.policy.QueuePolicy;
import io.gpupool.engine.state.ClusterState;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;

/**
 * Chooses which running jobs to stop so a job can start: victims the policy allows, cheapest first,
 * released one by one until the job fits; then every victim that is not needed after all is spared
 * (kube-scheduler's "reprieve"), most expensive first. Works entirely inside a checkpoint: the cluster
 * is left as it was.
 */
final class PreemptionPlanner {
    /** Victims tried per blocked job; bounds the cost of a round on a busy pool. */
    static final int MAX_CANDIDATES = 256;

    private PreemptionPlanner() {}

    /** The victims to preempt, or null when no allowed set makes the job fit. */
    static List<JobState> plan(PolicyContext ctx, QueuePolicy policy, PlacementPipeline pipeline, WorkloadProfile profile,
                               JobState job, Collection<JobState> running) {
        List<JobState> candidates = cheapest(ctx, policy, job, running);
        if (candidates.isEmpty()) return null;
        ClusterState cluster = ctx.cluster();
        int mark = cluster.checkpoint();
        try {
            List<JobState> chosen = new ArrayList<>();
            boolean fits = false;
            for (JobState v : candidates) {
                if (!policy.mayAlsoPreempt(ctx, job, v, chosen)) continue;
                cluster.release(v.allocation().grants());
                chosen.add(v);
                if (fits(cluster, pipeline, profile, job)) { fits = true; break; }
            }
            if (!fits) return null;
            for (int i = chosen.size() - 1; i >= 0 && chosen.size() > 1; i--) {
                JobState v = chosen.get(i);
                cluster.reinstate(v.allocation().grants());
                if (fits(cluster, pipeline, profile, job)) chosen.remove(i);
                else cluster.release(v.allocation().grants());
            }
            return chosen;
        } finally {
            cluster.rollback(mark);
        }
    }

    /**
     * The {@value #MAX_CANDIDATES} cheapest allowed victims, cheapest first: a bounded max-heap over the
     * running jobs, so a busy pool costs O(n log 256) per blocked job instead of sorting every candidate.
     */
    private static List<JobState> cheapest(PolicyContext ctx, QueuePolicy policy, JobState job, Collection<JobState> running) {
        Comparator<JobState> order = policy.victimOrder(ctx);
        PriorityQueue<JobState> dearestOnTop = new PriorityQueue<>(order.reversed());
        for (JobState v : running) {
            if (!v.spec().preemptible() || !policy.mayPreempt(ctx, job, v)) continue;
            if (dearestOnTop.size() < MAX_CANDIDATES) dearestOnTop.add(v);
            else if (order.compare(v, dearestOnTop.peek()) < 0) {
                dearestOnTop.poll();
                dearestOnTop.add(v);
            }
        }
        List<JobState> out = new ArrayList<>(dearestOnTop);
        out.sort(order);
        return out;
    }

    private static boolean fits(ClusterState cluster, PlacementPipeline pipeline, WorkloadProfile profile, JobState job) {
        return pipeline.place(new CycleState(cluster, job.spec(), profile, null), false).ok();
    }
}
