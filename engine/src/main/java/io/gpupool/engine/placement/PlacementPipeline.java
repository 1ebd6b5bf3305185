package io.gpupool.engine.placement;

import io.gpupool.engine.placement.plugins.Filters;
import io.gpupool.engine.placement.plugins.GivenGpus;
import io.gpupool.engine.state.Allocation;
import io.gpupool.engine.state.ClusterState;
import io.gpupool.engine.state.GpuGrant;
import io.gpupool.engine.state.NodeState;
import io.gpupool.engine.status.Code;
import io.gpupool.engine.status.NodeCount;
import io.gpupool.engine.status.NodeTally;
import io.gpupool.engine.status.Resource;
import io.gpupool.engine.status.Status;
import io.gpupool.model.GpuShare;
import io.gpupool.model.JobSpec;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.function.IntPredicate;

/**
 * filter -> score -> bind for one job, replica by replica. The capacity index proposes nodes in the
 * order the main scorer prefers; filters and the GPU policy keep the feasible ones; scorers rank up to
 * {@code candidateLimit} of them; the best node's GPUs are taken inside a checkpoint, so a gang either
 * gets every replica or nothing.
 */
public final class PlacementPipeline {
    /** What a failed placement says when the capacity index offered no node at all. */
    private static final String NO_NODE = "no node of an allowed GPU model has that much free capacity";
    private static final String NO_NODE_NVLINK = NO_NODE + " inside one NVLink domain";

    private final PlacementConfig config;
    private final List<FilterPlugin> filters;
    private final ScorePlugin[] scorers;
    private final double[] weights;
    private final GpuSelector gpuPolicy;
    private final boolean tightFirst;
    private final boolean dependsOnlyOnClusterState;

    public PlacementPipeline(PlacementConfig config) {
        this(config, List.of());
    }

    /**
     * @param driverFilters filters a driver adds after the default ones (the Kubernetes scheduler's node
     *                      selector and taints); they veto nodes, they never rank them
     */
    public PlacementPipeline(PlacementConfig config, List<FilterPlugin> driverFilters) {
        this.config = config;
        List<FilterPlugin> all = new ArrayList<>(PlacementPlugins.defaultFilters());
        all.addAll(driverFilters);
        this.filters = List.copyOf(all);
        int k = config.scorerWeights().size();
        this.scorers = new ScorePlugin[k];
        this.weights = new double[k];
        int i = 0;
        ScorePlugin heaviest = null;
        double maxW = -1;
        for (Map.Entry<String, Double> e : config.scorerWeights().entrySet()) {
            scorers[i] = PlacementPlugins.scorer(e.getKey());
            weights[i] = e.getValue();
            if (weights[i] > maxW) { maxW = weights[i]; heaviest = scorers[i]; }
            i++;
        }
        this.gpuPolicy = PlacementPlugins.gpuPolicy(config.gpuPolicy() != null ? config.gpuPolicy() : scorers[0].defaultGpuPolicy());
        this.tightFirst = heaviest.prefersTightNodes();
        boolean readsProfile = gpuPolicy.readsWorkloadProfile();
        for (ScorePlugin s : scorers) readsProfile |= s.readsWorkloadProfile();
        this.dependsOnlyOnClusterState = driverFilters.isEmpty() && !readsProfile;
    }

    public PlacementConfig config() { return config; }

    /**
     * Whether {@link #place} gives the same answer for the same job shape whenever the cluster state is the
     * same ({@link ClusterState#version()}): true unless a scorer or the GPU policy reads the workload
     * profile (FGD), or a driver added filters (they may look at things outside the cluster state).
     */
    public boolean dependsOnlyOnClusterState() {
        return dependsOnlyOnClusterState;
    }

    /**
     * Places every replica of the job. With {@code bind} the grants stay applied to the cluster state;
     * without, the state is left as it was (a dry run).
     */
    public PlacementResult place(CycleState cycle, boolean bind) {
        ClusterState cluster = cycle.cluster();
        JobSpec job = cycle.job();
        ReplicaDemand demand = ReplicaDemand.of(job);
        // the pool's model order, never the job's Set order (which differs between JVM runs): same inputs, same placement
        Collection<String> models = job.allowedModels().isEmpty() ? cluster.modelIds()
                : cluster.modelIds().stream().filter(job.allowedModels()::contains).toList();
        int mark = cluster.checkpoint();
        List<List<GpuGrant>> replicas = new ArrayList<>(job.shape().replicas());
        List<Integer> nodes = new ArrayList<>(job.shape().replicas());
        for (int r = 0; r < job.shape().replicas(); r++) {
            ReplicaChoice choice = bestNode(cycle, demand, models);
            if (choice.node < 0) {
                cluster.rollback(mark);
                return PlacementResult.failed(unplaced(r, job.shape().replicas(), demand, choice.refusals, cluster.cordonedNodes()));
            }
            replicas.add(grant(cycle, demand, cluster.node(choice.node), choice.gpus));
            nodes.add(choice.node);
        }
        if (bind) cluster.commit(mark);
        else cluster.rollback(mark);
        cycle.gangNodes.clear();
        return PlacementResult.placed(new Allocation(job.id(), replicas, job.host(), nodes));
    }

    /**
     * Places every replica of the job on one given node (kube-scheduler chose it, or a pod is already
     * bound there): the same filters, GPU policy and capacity rules as {@link #place}, no choice of node.
     */
    public PlacementResult placeOn(CycleState cycle, int nodeId, boolean bind) {
        ClusterState cluster = cycle.cluster();
        JobSpec job = cycle.job();
        ReplicaDemand demand = ReplicaDemand.of(job);
        NodeState n = cluster.node(nodeId);
        int mark = cluster.checkpoint();
        List<List<GpuGrant>> replicas = new ArrayList<>(job.shape().replicas());
        for (int r = 0; r < job.shape().replicas(); r++) {
            Status why = filterNode(cycle, demand, n);
            int[] gpus = why == null ? gpuPolicy.select(cycle, demand, n) : null;
            if (gpus == null) {
                cluster.rollback(mark);
                cycle.gangNodes.clear();
                return PlacementResult.failed((why != null ? why : noGpuStatus(cycle, demand, n)).within("node " + n.name() + " cannot hold " + demand + ": "));
            }
            replicas.add(grant(cycle, demand, n, gpus));
        }
        if (bind) cluster.commit(mark);
        else cluster.rollback(mark);
        cycle.gangNodes.clear();
        return PlacementResult.placed(new Allocation(job.id(), replicas, job.host(), java.util.Collections.nCopies(replicas.size(), nodeId)));
    }

    /**
     * Places the job exactly where {@code proposed} says (a batch optimizer's answer): every replica's node
     * must pass the filters and its GPUs the GPU rule ({@link GivenGpus}). The grants are rebuilt here, so
     * compute and memory are what {@link #place} would grant. With {@code bind} they stay applied; on any
     * failure nothing is.
     */
    public PlacementResult placeGiven(CycleState cycle, Allocation proposed, boolean bind) {
        ClusterState cluster = cycle.cluster();
        JobSpec job = cycle.job();
        ReplicaDemand demand = ReplicaDemand.of(job);
        int count = job.shape().replicas();
        if (proposed.replicas().size() != count) {
            return PlacementResult.failed(Status.error(Status.PLACEMENT, "job " + job.id() + " has " + count + " replicas, the placement gives " + proposed.replicas().size()));
        }
        int mark = cluster.checkpoint();
        List<List<GpuGrant>> replicas = new ArrayList<>(count);
        for (int r = 0; r < count; r++) {
            List<GpuGrant> given = proposed.replicas().get(r);
            int at = proposed.nodeOf(r);
            NodeState n = at < 0 || at >= cluster.nodeCount() ? null : cluster.node(at);
            Status why = n == null ? Status.error(Status.PLACEMENT, "names no node of this pool") : null;
            int[] gpus = new int[given.size()];
            for (int i = 0; i < gpus.length && why == null; i++) {
                if (given.get(i).node() != n.id()) why = Status.error(Status.PLACEMENT, "spans nodes");
                gpus[i] = given.get(i).gpu();
            }
            if (why == null) why = filterNode(cycle, demand, n);
            if (why == null) why = GivenGpus.check(cycle, demand, n, gpus);
            if (why != null) {
                cluster.rollback(mark);
                cycle.gangNodes.clear();
                return PlacementResult.failed(why.within("job " + job.id() + " replica " + (r + 1) + "/" + count
                        + (n == null ? "" : " on " + n.name()) + ": "));
            }
            replicas.add(grant(cycle, demand, n, gpus));
        }
        if (bind) cluster.commit(mark);
        else cluster.rollback(mark);
        cycle.gangNodes.clear();
        return PlacementResult.placed(new Allocation(job.id(), replicas, job.host(), proposed.replicaNodes()));
    }

    /**
     * Whether one replica of the job fits on the node now: null when it does, else why not (its code tells a
     * node that could take it later from one that never can).
     */
    public Status filterNode(CycleState cycle, NodeState node) {
        ReplicaDemand demand = ReplicaDemand.of(cycle.job());
        Status why = filterNode(cycle, demand, node);
        if (why != null) return why;
        return gpuPolicy.select(cycle, demand, node) == null ? noGpuStatus(cycle, demand, node) : null;
    }

    /**
     * The weighted scores of one replica of the job on each node (all must pass {@link #filterNode}), each
     * scorer rescaled to 0..100 over these nodes as in {@link #place}; higher is better.
     */
    public double[] scoreNodes(CycleState cycle, List<NodeState> nodes) {
        ReplicaDemand demand = ReplicaDemand.of(cycle.job());
        List<int[]> choices = new ArrayList<>(nodes.size());
        for (NodeState n : nodes) {
            int[] gpus = gpuPolicy.select(cycle, demand, n);
            if (gpus == null) throw new IllegalArgumentException("node " + n.name() + " cannot hold " + demand);
            choices.add(gpus);
        }
        return weightedScores(cycle, demand, nodes, choices);
    }

    private Status filterNode(CycleState cycle, ReplicaDemand demand, NodeState n) {
        for (FilterPlugin f : filters) {
            Status why = f.filter(cycle, demand, n);
            if (why != null) return why;
        }
        return null;
    }

    /**
     * The GPU policy found no GPUs on a node that passed the filters: for whole GPUs, none that keep to the NVLink
     * rule or avoid reserved GPUs; for a share, no GPU with the compute that also has the memory (and a task slot).
     */
    private static Status noGpuStatus(CycleState cycle, ReplicaDemand demand, NodeState n) {
        if (demand.exclusive()) {
            Resource r = demand.requireNvlink() && demand.gpus() > 1 ? Resource.NVLINK : Resource.GPUS;
            long free = r == Resource.NVLINK ? n.maxIdleInNvlinkDomain() : n.fullyFreeGpus();
            return Status.insufficient(Status.GPU_POLICY, r, demand.gpus(), free, n.gpuCount(), "without a fitting GPU set (NVLink or reserved GPUs)");
        }
        long most = 0;
        for (int g = 0; g < n.gpuCount(); g++) {
            if (n.canShare(g) && n.freeMilli(g) >= demand.milli() && !cycle.excluded(n.id(), g)) most = Math.max(most, n.freeMemoryMib(g));
        }
        return Status.insufficient(Status.GPU_POLICY, Resource.GPU_MEMORY, demand.memoryOn(n.model(), n.memoryCapacityMib()), most,
                n.memoryCapacityMib(), "without a GPU that has the memory");
    }

    /**
     * No node could hold replica {@code r} (from 0) of {@code replicas}: the status of the reason most visited nodes gave
     * or, when the capacity index offered no node at all, the capacity the replica asks for; its counts per reason end
     * with the cordoned nodes (the index never offers them). Its text is made when read: most refusals never are.
     */
    private static Status unplaced(int r, int replicas, ReplicaDemand demand, NodeTally refusals, int cordoned) {
        List<NodeCount> counts = refusals.counts();   // a list of its own: the refusal keeps it, unchanged after this
        NodeCount top = NodeTally.dominant(counts);
        boolean nvlink = demand.exclusive() && demand.requireNvlink() && demand.gpus() > 1;
        String noNode = top != null ? null : nvlink ? NO_NODE_NVLINK : NO_NODE;   // told when no node was visited
        Status s;
        if (top == null) {
            s = !demand.exclusive()
                    ? Status.insufficient(Filters.CapacityFilter.NAME, Resource.GPU_COMPUTE, demand.milli(), Status.UNKNOWN, GpuShare.WHOLE, noNode)
                    : Status.insufficient(Filters.CapacityFilter.NAME, nvlink ? Resource.NVLINK : demand.gpus() == 0 ? Resource.NODES : Resource.GPUS,
                    demand.gpus(), Status.UNKNOWN, Status.UNKNOWN, noNode);
        } else {
            s = top.reason();
        }
        if (cordoned > 0) counts.add(new NodeCount(Status.unschedulable(Filters.HealthFilter.NAME, Resource.NONE, "cordoned"), cordoned));
        List<NodeCount> all = Collections.unmodifiableList(counts);
        return Status.lazy(Code.UNSCHEDULABLE, s.plugin(), s.resource(), s.requested(), s.free(), s.capacity(), all, () -> {
            String which = replicas > 1 ? "replica " + (r + 1) + "/" + replicas + " (" + demand + ")" : demand.toString();
            String tallies = NodeTally.render(all);
            String told = noNode == null ? tallies : tallies.isEmpty() ? noNode : noNode + "; " + tallies;
            return "no node can hold " + which + ": " + told;
        });
    }

    private List<GpuGrant> grant(CycleState cycle, ReplicaDemand demand, NodeState n, int[] gpus) {
        GpuGrant[] each = new GpuGrant[gpus.length];
        for (int i = 0; i < gpus.length; i++) {
            each[i] = new GpuGrant(n.id(), gpus[i], demand.exclusive() ? 1000 : demand.milli(),
                    demand.memoryOn(n.model(), n.memoryCapacityMib()), demand.exclusive());
        }
        List<GpuGrant> grants = List.of(each);   // unmodifiable already: the Allocation keeps it without a copy
        cycle.cluster().apply(grants);
        if (demand.host().requested()) cycle.cluster().takeHost(n.id(), demand.host());
        cycle.gangNodes.add(n.id());
        return grants;
    }

    private record ReplicaChoice(int node, int[] gpus, NodeTally refusals, int visited) {}

    private ReplicaChoice bestNode(CycleState cycle, ReplicaDemand demand, Collection<String> models) {
        ClusterState cluster = cycle.cluster();
        int limit = config.candidateLimit() == 0 ? Integer.MAX_VALUE : config.candidateLimit();
        List<Integer> nodes = new ArrayList<>();
        List<int[]> choices = new ArrayList<>();
        NodeTally reasons = new NodeTally();
        IntPredicate visit = id -> {
            NodeState n = cluster.node(id);
            Status why = filterNode(cycle, demand, n);
            if (why != null) { reasons.add(why); return true; }
            int[] gpus = gpuPolicy.select(cycle, demand, n);
            if (gpus == null) {
                reasons.add(noGpuStatus(cycle, demand, n));
                return true;
            }
            nodes.add(id);
            choices.add(gpus);
            return nodes.size() < limit;
        };
        if (demand.exclusive() && demand.requireNvlink() && demand.gpus() > 1) {
            cluster.visitNvlinkCandidates(models, demand.gpus(), tightFirst, visit);
        } else {
            cluster.visitCandidates(models, demand.gpus(), demand.shareMilli(), tightFirst, visit);
        }
        if (nodes.isEmpty()) return new ReplicaChoice(-1, null, reasons, 0);
        if (nodes.size() == 1) return new ReplicaChoice(nodes.getFirst(), choices.getFirst(), reasons, 1);
        int size = nodes.size();
        List<NodeState> candidates = new ArrayList<>(size);
        for (int id : nodes) candidates.add(cluster.node(id));
        double[] total = weightedScores(cycle, demand, candidates, choices);
        int best = 0;
        for (int i = 1; i < size; i++) if (total[i] > total[best] + 1e-9) best = i;
        return new ReplicaChoice(nodes.get(best), choices.get(best), reasons, size);
    }

    /** Each scorer's raw scores rescaled to 0..100 over the candidates, then weighted and summed. */
    private double[] weightedScores(CycleState cycle, ReplicaDemand demand, List<NodeState> nodes, List<int[]> choices) {
        int size = nodes.size();
        double[] total = new double[size];
        double[] raw = new double[size];
        for (int s = 0; s < scorers.length; s++) {
            double min = Double.MAX_VALUE, max = -Double.MAX_VALUE;
            for (int i = 0; i < size; i++) {
                raw[i] = scorers[s].score(cycle, demand, nodes.get(i), choices.get(i));
                min = Math.min(min, raw[i]);
                max = Math.max(max, raw[i]);
            }
            double range = max - min;
            for (int i = 0; i < size; i++) {
                double norm = range <= 1e-12 ? 100 : 100 * (raw[i] - min) / range;
                total[i] += weights[s] * norm;
            }
        }
        return total;
    }
}
