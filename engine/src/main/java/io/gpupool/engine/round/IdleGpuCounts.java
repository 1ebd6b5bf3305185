package io.gpupool.engine.round;

import io.gpupool.engine.JobState;
import io.gpupool.engine.JobStatus;
import io.gpupool.engine.placement.CycleState;
import io.gpupool.engine.state.ClusterState;
import io.gpupool.engine.state.NodeState;

import java.util.Arrays;

/**
 * A necessary condition for placing a whole-GPU job once some running jobs are gone, by counting: every GPU selector
 * takes a whole-GPU replica as that many idle, healthy GPUs of one node ({@code NodeState.isFullyFree}), so when the
 * nodes' idle GPUs, counting those only the released jobs hold, cannot hold every replica, no placement can succeed.
 * The jobs released are a range of the preemption planner's victim list (from its first still-listed entry): each
 * victim counted is kept as the nodes where a GPU turns idle once it is gone, while the cluster is unchanged, so a
 * round's blocked jobs, each asking for a prefix, share one count of the list. An answer moves a cursor to the prefix
 * asked (applying or taking back those steps) that keeps, per replica size p, the replicas of p GPUs the nodes could
 * hold: sum over nodes of idle / p. A round's asks mostly shrink the prefix a little at a time (later jobs may preempt
 * less), so an answer costs the few steps between two prefixes, not a pass over the nodes.
 *
 * <p>One instance serves the rounds of one scheduler (its buffers are reused), and the counts outlive the round: the
 * next round's list, at the same cluster version, usually begins with the same jobs (rounds of arrivals), and a step
 * counted for a job at the same place, in the same run, is that round's step too (the version pins every allocation and
 * GPU's health). A round trusts a kept step only once it has seen its own list hold that job there; at the first
 * difference it counts again.
 */
final class IdleGpuCounts {
    private ClusterState cluster;
    private JobState[] victims;
    private int[] runOf;
    private int nodes;
    private int maxGpus;                   // the most GPUs on one node: a larger replica fits nowhere
    private int[] firstGpu = new int[1];   // per node, the index of its GPU 0 in `left`
    private int[] left = new int[0];       // per GPU: its tasks not held by the victims counted so far
    private long version = -1;
    private int from, counted;
    private JobState[] countedJobs = new JobState[0];   // victims[from + i] when step i was counted, and its run
    private int[] countedRuns = new int[0];
    private int[] stepStart = new int[1];  // step i: the nodes stepNodes[stepStart[i], stepStart[i + 1]) gain an idle GPU
    private int[] stepNodes = new int[0];
    private int seen;                      // steps [0, seen) hold for this round's list: its entries match countedJobs there
    private int[] idle = new int[0];       // per node: idle GPUs with victims[from, from + at) gone
    private int[] replicasOf = new int[1]; // per replica size p (1..maxGpus): sum over nodes of idle / p
    private int[] nodesWithIdle = new int[1];   // restart's scratch: nodes per idle count
    private int[][] sizesDividing = new int[1][];   // per idle count c (0..maxGpus): the sizes p that c / p steps up at
    private int at;                        // the cursor's prefix
    // per size p and count v: the shortest prefix of this count whose replicas of p reach v (counts only grow with the
    // prefix, so it is where the cursor first stepped to v); recorded as the cursor passes its furthest point so far
    private int[][] reachedAt = new int[1][];
    private int furthest;                  // the cursor's furthest prefix since the last restart
    private int[] baseReplicasOf = new int[1];   // replicasOf at the empty prefix

    /** A new round's victim list (in the planner's order) with each entry's preemption count when listed. */
    void begin(ClusterState cluster, JobState[] victims, int[] runOf) {
        // a cluster only gains nodes, so the same cluster with as many nodes has the same GPUs per node
        boolean sameLayout = cluster == this.cluster && nodes == cluster.nodeCount();
        this.cluster = cluster;
        this.victims = victims;
        this.runOf = runOf;
        seen = 0;
        if (!sameLayout) {
            version = -1;
            nodes = cluster.nodeCount();
            firstGpu = new int[nodes + 1];
            maxGpus = 0;
            for (int n = 0; n < nodes; n++) {
                firstGpu[n + 1] = firstGpu[n] + cluster.node(n).gpuCount();
                maxGpus = Math.max(maxGpus, cluster.node(n).gpuCount());
            }
            left = new int[firstGpu[nodes]];
            idle = new int[nodes];
            replicasOf = new int[maxGpus + 1];
            baseReplicasOf = new int[maxGpus + 1];
            reachedAt = new int[maxGpus + 1][];
            for (int p = 1; p <= maxGpus; p++) reachedAt[p] = new int[firstGpu[nodes] / p + 1];
            nodesWithIdle = new int[maxGpus + 1];
            sizesDividing = new int[maxGpus + 1][];
            for (int c = 0; c <= maxGpus; c++) {
                int k = c;
                sizesDividing[c] = java.util.stream.IntStream.rangeClosed(1, maxGpus).filter(p -> k % p == 0).toArray();
            }
        }
    }

    /**
     * False only when the job cannot be placed with every job of {@code victims[from, to)} still in the run it was
     * listed in gone (others are not counted); true for jobs that are not whole-GPU.
     */
    boolean couldHold(JobState job, int from, int to) {
        int perReplica = job.spec().shape().gpusPerReplica();
        if (perReplica == 0 || !job.spec().share().isWhole()) return true;
        if (nodes == 0 || perReplica > maxGpus) return false;
        if (cluster.version() != version || from != this.from) restart(from);
        int need = to - from, replicas = job.spec().shape().replicas();
        // the steps under the cursor must be this list's before its counts are read
        while (seen < Math.min(at, need)) {
            if (!keptStepHolds(seen)) restart(from);   // counted for other jobs from here on: count again
            else seen++;
        }
        if (at > need) moveTo(need);
        // the counts only grow with the prefix: once the job could be held, the rest of the range is not needed
        while (replicasOf[perReplica] < replicas && at < need) {
            if (at == seen) {
                if (at == counted) countNext();
                else if (keptStepHolds(at)) seen++;
                else {
                    restart(from);
                    continue;
                }
            }
            moveTo(at + 1);
        }
        return replicasOf[perReplica] >= replicas;
    }

    /** Whether the kept step {@code i} was counted for the job this round's list holds at that place, in the same run. */
    private boolean keptStepHolds(int i) {
        return victims[from + i] == countedJobs[i] && runOf[from + i] == countedRuns[i];
    }

    /**
     * After {@link #couldHold} said true for {@code victims[from, to)}: the end of the shortest range {@code [from, e)}
     * with which the counts still say the job could fit (no shorter range could hold it). {@code from + 1} for a job the
     * counts do not decide (not whole-GPU). A look-up: counting up to {@code to} noted where each count was first reached.
     */
    int shortestHolding(JobState job, int from, int to) {
        int perReplica = job.spec().shape().gpusPerReplica();
        if (perReplica == 0 || !job.spec().share().isWhole()) return from + 1;
        int replicas = job.spec().shape().replicas();
        if (replicas <= baseReplicasOf[perReplica]) return from + 1;   // the nodes hold it as they are
        return from + reachedAt[perReplica][replicas];   // couldHold's cursor went through it to reach `to`
    }

    private void restart(int from) {
        version = cluster.version();
        this.from = from;
        counted = 0;
        seen = 0;
        at = 0;
        Arrays.fill(nodesWithIdle, 0);
        for (int n = 0; n < nodes; n++) {
            NodeState node = cluster.node(n);
            idle[n] = node.fullyFreeGpus();
            nodesWithIdle[idle[n]]++;
            for (int g = 0; g < node.gpuCount(); g++) left[firstGpu[n] + g] = node.tasks(g);
        }
        // per size, from how many nodes have each idle count: no division per node
        for (int p = 1; p <= maxGpus; p++) {
            int sum = 0;
            for (int c = p; c <= maxGpus; c++) sum += nodesWithIdle[c] * (c / p);
            replicasOf[p] = sum;
        }
        System.arraycopy(replicasOf, 0, baseReplicasOf, 0, replicasOf.length);
        furthest = 0;
    }

    /** Counts the next victim: the nodes where a GPU turns idle once it is gone too (none for one not in its listed run). */
    private void countNext() {
        int i = from + counted;
        JobState v = victims[i];
        if (countedJobs.length <= counted) {
            countedJobs = Arrays.copyOf(countedJobs, Math.max(16, 2 * counted));
            countedRuns = Arrays.copyOf(countedRuns, countedJobs.length);
            stepStart = Arrays.copyOf(stepStart, countedJobs.length + 1);
        }
        countedJobs[counted] = v;
        countedRuns[counted] = runOf[i];
        int end = stepStart[counted];
        if (v.status() == JobStatus.RUNNING && v.preemptions() == runOf[i]) {   // else not a candidate: holds nothing it was listed with
            for (long key : v.heldGpus()) {   // an array: the allocation's lists of grants were most of the cost here
                int node = CycleState.nodeOfKey(key), gpu = CycleState.gpuOfKey(key);
                // idle once every task on it is a released job's
                if (--left[firstGpu[node] + gpu] == 0 && cluster.node(node).healthy(gpu)) {
                    if (end == stepNodes.length) stepNodes = Arrays.copyOf(stepNodes, Math.max(64, 2 * end));
                    stepNodes[end++] = node;
                }
            }
        }
        stepStart[++counted] = end;
        seen = counted;
    }

    /** Moves the cursor to the prefix of {@code k} counted victims. */
    private void moveTo(int k) {
        for (; at < k; at++) {
            if (at == furthest) {   // a step never taken in this count: note the counts it reaches
                furthest++;
                for (int s = stepStart[at]; s < stepStart[at + 1]; s++) {
                    for (int p : sizesDividing[++idle[stepNodes[s]]]) reachedAt[p][++replicasOf[p]] = furthest;
                }
                continue;
            }
            for (int s = stepStart[at]; s < stepStart[at + 1]; s++) {
                for (int p : sizesDividing[++idle[stepNodes[s]]]) replicasOf[p]++;
            }
        }
        for (; at > k; at--) {
            for (int s = stepStart[at - 1]; s < stepStart[at]; s++) {
                for (int p : sizesDividing[idle[stepNodes[s]]--]) replicasOf[p]--;
            }
        }
    }
}
