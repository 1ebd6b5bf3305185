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
 * share one count of the list. One instance serves the rounds of one scheduler (its buffers are reused).
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

    /** A new round's victim list (in the planner's order) with each entry's preemption count when listed. */
    void begin(ClusterState cluster, JobState[] victims, int[] runOf) {
        // a cluster only gains nodes, so the same cluster with as many nodes has the same GPUs per node
        boolean sameLayout = cluster == this.cluster && nodes == cluster.nodeCount();
        this.cluster = cluster;
        this.victims = victims;
        this.runOf = runOf;
        this.version = -1;
        if (!sameLayout) {
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
        while (this.from + counted < to) countNext();
        int row = (to - from) * nodes;
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
        counted++;
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
