package io.gpupool.engine.round;

import io.gpupool.engine.JobState;
import io.gpupool.engine.JobStatus;
import io.gpupool.engine.placement.CycleState;
import io.gpupool.engine.placement.PlacementPipeline;
import io.gpupool.engine.policy.PolicyContext;
import io.gpupool.engine.policy.Preemption;
import io.gpupool.engine.state.ClusterState;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Chooses which running jobs to stop so a job can start: victims the policy allows, cheapest first,
 * released one by one until the job fits; then every victim that is not needed after all is spared
 * (kube-scheduler's "reprieve"), most expensive first. Each what-if places the job as the round would ({@code cycles}:
 * outside the GPUs advance reservations keep it off). Works entirely inside a checkpoint: the cluster
 * is left as it was.
 *
 * <p>One planner serves one round. It takes the running jobs in the policy's victim order once, when the round
 * first looks for victims ({@link Preemption#runningInVictimOrder}: sorted, or kept in order by the policy), and every
 * blocked job of the round walks that list: a round with many blocked jobs costs one sort plus a short walk per job,
 * not a scan of every running job per job. The preemptible ones are listed as the walks reach them (most walks stop
 * early), each with its rank when the policy ranks victims ({@link Preemption#victimRanks}: a walk then compares
 * numbers, the job's bound worked out once) and its preemption count then: a job is preempted in a round only once
 * listed, so that count is the one it had when the round began. A job that started at this very instant (in this round, or a victim that started
 * again) is no victim: stopping it would waste nothing but churn.
 */
final class PreemptionPlanner {
    /** Victims tried per blocked job; bounds the cost of a round on a busy pool. */
    static final int MAX_CANDIDATES = 256;

    private final PolicyContext ctx;
    private final Preemption policy;
    private final boolean allowedVictimsComeFirst;
    private final PlacementPipeline pipeline;
    private final Function<JobState, CycleState> cycles;
    private final JobState[] running;   // [0, runningCount): the policy's victim order when the round first looked for victims
    private final int runningCount;
    private final Preemption.VictimRanks ranks;   // the policy's rank of each of them, null: ask mayPreempt
    private int read;                   // running[0, read) looked at for the list
    private final JobState[] byCost;    // the preemptible ones of running[0, read) started before now, in order
    private final double[] rankOf;      // each entry's rank (when the policy ranks)
    private final int[] runOf;     // each entry's preemption count when listed: a job preempted since is another run
    private int listed;            // byCost[0, listed) is filled
    private int first;             // entries before it have all been preempted
    private final IdleGpuCounts idle;
    private int end;               // cheapest: one past the last candidate it took
    private final int[] picked;      // cheapest: the candidates' places in byCost
    private final int[] allowedAt;   // plan: the allowed victims' places in byCost

    /**
     * The arrays of a scheduler's planners, reused from round to round (a round has one planner at a time): a round's
     * lists fill only their first entries, which is all a planner reads.
     */
    static final class Buffers {
        private JobState[] running = new JobState[0], byCost = new JobState[0];
        private double[] rankOf = new double[0];
        private int[] runOf = new int[0];
        private final int[] picked = new int[MAX_CANDIDATES], allowedAt = new int[MAX_CANDIDATES];

        private void fit(int n) {
            if (running.length >= n) return;
            int len = Math.max(n, 2 * running.length);
            running = new JobState[len];
            byCost = new JobState[len];
            rankOf = new double[len];
            runOf = new int[len];
        }
    }

    PreemptionPlanner(PolicyContext ctx, Preemption policy, boolean allowedVictimsComeFirst, PlacementPipeline pipeline,
                      Function<JobState, CycleState> cycles, IdleGpuCounts idle, Buffers buffers) {
        this.ctx = ctx;
        this.policy = policy;
        this.allowedVictimsComeFirst = allowedVictimsComeFirst;
        this.pipeline = pipeline;
        this.cycles = cycles;
        // a copy: a policy's standing list may change as victims stop and start during the round
        List<JobState> inVictimOrder = policy.runningInVictimOrder(ctx);
        runningCount = inVictimOrder.size();
        buffers.fit(runningCount);
        running = inVictimOrder.toArray(buffers.running);
        ranks = policy.victimRanks(ctx, inVictimOrder);
        byCost = buffers.byCost;
        rankOf = buffers.rankOf;
        runOf = buffers.runOf;
        picked = buffers.picked;
        allowedAt = buffers.allowedAt;
        this.idle = idle;
        idle.begin(ctx.cluster(), byCost, runOf);
    }

    /**
     * Lists the next preemptible job started before now, if any. The policy's order is total (ties end at arrival
     * order): filtering after ordering gives the order of the filtered jobs.
     */
    private boolean listNext() {
        while (read < runningCount) {
            JobState v = running[read++];
            if (v.spec().preemptible() && v.runStartMs() < ctx.nowMs()) {
                if (ranks != null) rankOf[listed] = ranks.rankAt(read - 1);
                byCost[listed] = v;
                runOf[listed++] = v.preemptions();
                return true;
            }
        }
        return false;
    }

    /** The victims to preempt, or null when no allowed set makes the job fit. */
    List<JobState> plan(JobState job) {
        int count = cheapest(job);
        // the candidates are among byCost[first, end): when even all of those gone leave too few idle GPUs, no set does
        if (count == 0 || !idle.couldHold(job, first, end)) return null;
        // the policy's say on each candidate given those allowed before it (it reads the ledger, not the cluster)
        List<JobState> allowed = new ArrayList<>(count);
        for (int k = 0; k < count; k++) {
            JobState v = byCost[picked[k]];
            if (!policy.mayAlsoPreempt(ctx, job, v, allowed)) continue;
            allowedAt[allowed.size()] = picked[k];
            allowed.add(v);
        }
        if (allowed.isEmpty()) return null;
        // no shorter prefix than `least` could hold the job by counting: the first placement tried is after it
        int holdsFrom = idle.shortestHolding(job, first, end);
        int least = 0;
        while (least < allowed.size() - 1 && allowedAt[least] < holdsFrom - 1) least++;
        least++;
        ClusterState cluster = ctx.cluster();
        int mark = cluster.checkpoint();
        try {
            List<JobState> chosen = new ArrayList<>();
            for (int i = 0; i < least; i++) {
                cluster.release(allowed.get(i).allocation());
                chosen.add(allowed.get(i));
            }
            if (!fits(cluster, job)) {
                if (least == allowed.size()) return null;
                // one placement says whether all allowed victims together make room; a job they do not stops here
                int some = cluster.checkpoint();
                for (int i = least; i < allowed.size(); i++) cluster.release(allowed.get(i).allocation());
                boolean enough = fits(cluster, job);
                cluster.rollback(some);
                if (!enough) return null;
                for (int i = least; i < allowed.size(); i++) {
                    cluster.release(allowed.get(i).allocation());
                    chosen.add(allowed.get(i));
                    if (fits(cluster, job)) break;
                }
            }
            for (int i = chosen.size() - 1; i >= 0 && chosen.size() > 1; i--) {
                JobState v = chosen.get(i);
                cluster.reinstate(v.allocation());
                if (fits(cluster, job)) chosen.remove(i);
                else cluster.release(v.allocation());
            }
            return chosen;
        } finally {
            cluster.rollback(mark);
        }
    }

    /**
     * Picks up to {@value #MAX_CANDIDATES} allowed victims, cheapest first, still in the run they were listed in:
     * their places in byCost go to {@code picked}; returns how many. The list is made only for a plan the counts let
     * through (most are refused on the places alone).
     */
    private int cheapest(JobState job) {
        int count = 0;
        double bound = ranks != null ? ranks.boundOf(job) : Double.NaN;
        for (int i = first; (i < listed || listNext()) && count < MAX_CANDIDATES; i++) {
            JobState v = byCost[i];
            boolean sameRun = v.status() == JobStatus.RUNNING && v.preemptions() == runOf[i];
            if (!sameRun) {
                if (i == first) first++;
                continue;
            }
            if (ranks != null ? rankOf[i] < bound : policy.mayPreempt(ctx, job, v)) {
                picked[count++] = i;
                end = i + 1;
            } else if (allowedVictimsComeFirst) break;
        }
        return count;
    }

    private boolean fits(ClusterState cluster, JobState job) {
        return pipeline.place(cycles.apply(job), false).ok();
    }
}
