package io.gpupool.engine.round;

import io.gpupool.engine.JobState;
import io.gpupool.engine.JobStatus;
import io.gpupool.engine.state.ClusterState;
import io.gpupool.engine.state.GpuGrant;
import io.gpupool.engine.state.NodeState;

import java.util.Arrays;
import java.util.List;

/**
 * A necessary condition for placing a whole-GPU job once some running jobs are gone, by counting: every GPU selector
 * takes a whole-GPU replica as that many idle, healthy GPUs of one node ({@code NodeState.isFullyFree}), so when the
 * nodes' idle GPUs, counting those only the released jobs hold, cannot hold every replica, no placement can succeed.
 * The jobs released are a range of the preemption planner's victim list (from its first still-listed entry): the counts
 * are kept per prefix of that range while the cluster is unchanged, so a round's blocked jobs, each asking for a prefix,
 * share one count of the list. One instance serves the rounds of one scheduler (its buffers are reused), and the counts
 * outlive the round: the next round's list, at the same cluster version, usually begins with the same jobs (rounds of
 * arrivals), and a prefix row counted for jobs at the same places, each in the same run, is that round's row too (the
 * version pins every allocation and GPU's health). A round trusts a kept row only once it has seen its own list hold
 * those jobs; at the first difference it counts again.
 */
final class IdleGpuCounts {
    private ClusterState cluster;
    private JobState[] victims;
    private int[] runOf;
    private int nodes;
    private int[] firstGpu = new int[1];   // per node, the index of its GPU 0 in `left`
    private int[] left = new int[0];       // per GPU: its tasks not held by the victims counted so far
    private int[] idleAt = new int[0];     // row i (nodes wide): idle GPUs per node with victims[from, from + i) gone
    private long version = -1;
    private int from, counted;
    private JobState[] countedJobs = new JobState[0];   // victims[from + i] when row i + 1 was counted, and its run
    private int[] countedRuns = new int[0];
    private int seen;              // rows [0, seen] hold for this round's list: its entries match countedJobs up to there

    /** A new round's victim list (in the planner's order) with each entry's preemption count when listed. */
    void begin(ClusterState cluster, JobState[] victims, int[] runOf) {
        // a cluster only gains nodes, so the same cluster with as many nodes has the same GPUs per node
        boolean sameLayout = cluster == this.cluster && nodes == cluster.nodeCount();
        if (cluster != this.cluster) version = -1;
        this.cluster = cluster;
        this.victims = victims;
        this.runOf = runOf;
        seen = 0;
        if (!sameLayout) {
            version = -1;
            nodes = cluster.nodeCount();
            firstGpu = new int[nodes + 1];
            for (int n = 0; n < nodes; n++) firstGpu[n + 1] = firstGpu[n] + cluster.node(n).gpuCount();
            left = new int[firstGpu[nodes]];
        }
    }

    /**
     * False only when the job cannot be placed with every job of {@code victims[from, to)} still in the run it was
     * listed in gone (others are not counted); true for jobs that are not whole-GPU.
     */
    boolean couldHold(JobState job, int from, int to) {
        int perReplica = job.spec().shape().gpusPerReplica();
        if (perReplica == 0 || !job.spec().share().isWhole()) return true;
        if (cluster.version() != version || from != this.from) restart(from);
        int need = to - from;
        while (seen < counted && seen < need) {
            int i = from + seen;
            if (victims[i] == countedJobs[seen] && runOf[i] == countedRuns[seen]) {
                seen++;
            } else {
                restart(from);   // counted for other jobs from here on (and `left` holds all of them): count again
            }
        }
        while (counted < need) countNext();
        int row = need * nodes;
        int replicas = 0, needed = job.spec().shape().replicas();
        for (int n = 0; n < nodes; n++) {
            replicas += idleAt[row + n] / perReplica;
            if (replicas >= needed) return true;
        }
        return false;
    }

    private void restart(int from) {
        version = cluster.version();
        this.from = from;
        counted = 0;
        seen = 0;
        if (idleAt.length < nodes) idleAt = new int[Math.max(nodes, 16 * nodes)];
        for (int n = 0; n < nodes; n++) {
            NodeState node = cluster.node(n);
            idleAt[n] = node.fullyFreeGpus();
            for (int g = 0; g < node.gpuCount(); g++) left[firstGpu[n] + g] = node.tasks(g);
        }
    }

    private void countNext() {
        int row = (counted + 1) * nodes;
        if (idleAt.length < row + nodes) idleAt = Arrays.copyOf(idleAt, Math.max(row + nodes, 2 * idleAt.length));
        System.arraycopy(idleAt, row - nodes, idleAt, row, nodes);
        int i = from + counted;
        JobState v = victims[i];
        if (countedJobs.length <= counted) {
            countedJobs = Arrays.copyOf(countedJobs, Math.max(16, 2 * counted));
            countedRuns = Arrays.copyOf(countedRuns, countedJobs.length);
        }
        countedJobs[counted] = v;
        countedRuns[counted] = runOf[i];
        seen = ++counted;
        if (v.status() != JobStatus.RUNNING || v.preemptions() != runOf[i]) return;   // not a candidate: holds nothing it was listed with
        for (List<GpuGrant> replica : v.allocation().replicas()) {
            for (GpuGrant g : replica) {
                NodeState node = cluster.node(g.node());
                // idle once every task on it is a released job's
                if (--left[firstGpu[g.node()] + g.gpu()] == 0 && node.healthy(g.gpu())) idleAt[row + g.node()]++;
            }
        }
    }
}
