package io.gpupool.engine.state;

import io.gpupool.model.ClusterSpec;
import io.gpupool.model.GpuModel;
import io.gpupool.model.GpuShare;
import io.gpupool.model.HostResources;
import io.gpupool.model.NodeSpec;
import io.gpupool.model.SpecException;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntPredicate;

/**
 * Free capacity of every GPU in the pool, with an index by free capacity per GPU model.
 *
 * <p>All changes go through {@link #apply} / {@link #release}; inside a {@link #checkpoint()} they are
 * journaled and {@link #rollback(int)} undoes them exactly. This is how a gang is placed all-or-nothing
 * and how backfill and preemption ask "what if" without copying the cluster.
 */
public final class ClusterState {
    private final List<NodeState> nodes = new ArrayList<>();
    private final Map<String, Integer> nodeByName = new HashMap<>();
    private final Map<String, CapacityIndex> indexByModel = new LinkedHashMap<>();
    private final Map<String, GpuModel> models = new LinkedHashMap<>();
    private final Map<NodeShape, Integer> shapes = new LinkedHashMap<>();
    // indexByModel's keys and values as lists, remade when a node of a new model is added (every placement reads them)
    private List<String> modelIds = List.of();
    private List<CapacityIndex> allIndexes = List.of();
    private long[] journalNode = new long[64];
    private int[] journalMilli = new int[64];
    private long[] journalMem = new long[64];
    private int[] journalTasks = new int[64];
    private long[] journalCpu;          // host CPU before a change; allocated on the first host change
    private int journalSize;
    private int depth;
    private final int maxGpusPerNode;
    private long totalMilli;
    private long totalMemoryMib;
    private int cordonedNodes;
    private long usedMilli;
    private long maxCpuMilliPerNode;
    private long version;
    private long lastVersion;           // versions are never reused: a rollback restores an older one, new ones count on from here
    private long[] versionAtMark = new long[4];
    private boolean unjournaledChange;  // health, cordon or nodes changed inside a tentative section: a rollback does not undo it

    public ClusterState(ClusterSpec spec) {
        int max = 0;
        for (NodeSpec n : spec.nodes()) max = Math.max(max, n.gpus().size());
        this.maxGpusPerNode = Math.max(max, 8);
        for (NodeSpec n : spec.nodes()) addNode(n);
    }

    /** Adds a node (an agent registering). Its GPUs must all be one model. */
    public NodeState addNode(NodeSpec spec) {
        unjournaled();
        if (spec.gpus().isEmpty()) throw new SpecException("node " + spec.name(), "gpus", "a GPU node needs at least one GPU");
        if (spec.gpus().size() >= HOST_ENTRY) throw new SpecException("node " + spec.name(), "gpus", "at most " + (HOST_ENTRY - 1) + " GPUs per node");
        if (spec.gpus().size() > maxGpusPerNode) {
            throw new SpecException("node " + spec.name(), "gpus", "at most " + maxGpusPerNode + " GPUs per node in this pool");
        }
        GpuModel model = spec.gpus().getFirst().model();
        for (var g : spec.gpus()) {
            if (!g.model().id().equals(model.id())) {
                throw new SpecException("node " + spec.name(), "gpus[" + g.index() + "].model",
                        "all GPUs of a node must be one model (" + model.id() + "), got " + g.model().id() + "; register mixed servers as separate nodes");
            }
        }
        if (nodeByName.containsKey(spec.name())) throw new SpecException("node " + spec.name(), "name", "already registered");
        NodeState n = new NodeState(nodes.size(), spec);
        nodes.add(n);
        nodeByName.put(spec.name(), n.id);
        models.putIfAbsent(model.id(), model);
        shapes.merge(NodeShape.of(n), 1, Integer::sum);
        n.index = indexByModel.computeIfAbsent(model.id(), k -> new CapacityIndex(maxGpusPerNode));
        if (indexByModel.size() != modelIds.size()) {
            modelIds = List.copyOf(indexByModel.keySet());
            allIndexes = List.copyOf(indexByModel.values());
        }
        n.index.update(n);
        bumpVersion();
        maxCpuMilliPerNode = Math.max(maxCpuMilliPerNode, spec.cpuMilli());
        totalMilli += (long) n.gpuCount() * GpuShare.WHOLE;
        totalMemoryMib += (long) n.gpuCount() * model.memoryMib();
        return n;
    }

    public int nodeCount() { return nodes.size(); }
    public NodeState node(int id) { return nodes.get(id); }
    public List<NodeState> nodes() { return java.util.Collections.unmodifiableList(nodes); }
    public Integer nodeId(String name) { return nodeByName.get(name); }
    public Collection<GpuModel> models() { return models.values(); }
    public int maxGpusPerNode() { return maxGpusPerNode; }
    /** The host CPU of the largest node, in thousandths of a core. */
    public long maxCpuMilliPerNode() { return maxCpuMilliPerNode; }

    /**
     * What decides whether a job could ever run on a node: its GPU model, GPU count, memory per GPU (with
     * oversubscription), the sizes of its NVLink domains and its host CPU and memory. Many nodes share one
     * shape, so a question about the empty pool (admission at submit) costs O(shapes), not O(nodes).
     */
    public record NodeShape(GpuModel model, int gpus, long memoryCapacityMib, List<Integer> nvlinkDomainSizes,
                            long cpuMilli, long hostMemoryMib) {
        static NodeShape of(NodeState n) {
            return new NodeShape(n.model(), n.gpuCount(), n.memoryCapacityMib(),
                    n.spec().nvlinkDomains().stream().map(List::size).sorted().toList(), n.spec().cpuMilli(), n.spec().memoryMib());
        }

        /** Whether a replica asking for these host resources fits this node's host at all. */
        public boolean hostHolds(HostResources h) {
            return h.cpuMilli() <= cpuMilli && h.memoryMib() <= hostMemoryMib;
        }

        /** GPUs in the largest NVLink domain (1 without NVLink: a GPU alone). */
        public int largestNvlinkDomain() {
            return nvlinkDomainSizes.isEmpty() ? 1 : nvlinkDomainSizes.getLast();
        }
    }

    /** Every node shape of the pool with how many nodes have it (cordon and health do not change shapes). */
    public Map<NodeShape, Integer> nodeShapes() {
        return java.util.Collections.unmodifiableMap(shapes);
    }

    /** Compute capacity of all GPUs, in thousandths of a GPU. */
    public long totalMilli() { return totalMilli; }
    /** Physical GPU memory of all GPUs. */
    public long totalMemoryMib() { return totalMemoryMib; }

    /** Nodes that take no new work. */
    public int cordonedNodes() { return cordonedNodes; }

    /**
     * Changes whenever any GPU's free capacity, a host's free CPU or memory, a node's health or cordon, or the
     * set of nodes changes (also inside and on rollback of a tentative section): equal versions mean the same
     * state, so a placement that failed at one version fails again at it.
     */
    public long version() { return version; }

    private void bumpVersion() {
        version = ++lastVersion;
    }

    /** A change the journal does not hold (health, cordon, nodes): a rollback inside this section cannot restore the version. */
    private void unjournaled() {
        if (depth > 0) unjournaledChange = true;
    }

    /** Compute in use over all GPUs, in thousandths of a GPU (kept incrementally). */
    public long usedMilli() {
        return usedMilli;
    }

    // ---- mutation -------------------------------------------------------------------------------

    /** Takes the grants' capacity for new work. Throws if any grant does not fit (a bug in the caller). */
    public void apply(List<GpuGrant> grants) {
        take(grants, true);
    }

    /**
     * Gives a job back grants it held before and that were released in a what-if (a preemption plan
     * sparing a victim). Every capacity rule holds as for {@link #apply}, but not the health rule: a job keeps
     * running on a GPU that turned unhealthy under it, so its grant there is still its own.
     */
    public void reinstate(List<GpuGrant> grants) {
        take(grants, false);
    }

    private void take(List<GpuGrant> grants, boolean newWork) {
        change(grants, 1, newWork);
    }

    /** Takes a whole allocation for new work: its GPU grants and each replica's host CPU and memory. */
    public void apply(Allocation a) {
        take(a, true);
    }

    /** {@link #reinstate(List)} for a whole allocation, host resources included. */
    public void reinstate(Allocation a) {
        take(a, false);
    }

    private void take(Allocation a, boolean newWork) {
        take(a.grants(), newWork);
        if (a.hostPerReplica().requested()) {
            for (int r = 0; r < a.replicas().size(); r++) takeHost(a.nodeOf(r), a.hostPerReplica());
        }
    }

    /** Gives a whole allocation back: its GPU grants and each replica's host CPU and memory. */
    public void release(Allocation a) {
        release(a.grants());
        if (a.hostPerReplica().requested()) {
            for (int r = 0; r < a.replicas().size(); r++) releaseHost(a.nodeOf(r), a.hostPerReplica());
        }
    }

    /** Takes host CPU and memory on a node for one replica. Throws if the host lacks them (a bug in the caller). */
    public void takeHost(int node, HostResources h) {
        NodeState n = nodes.get(node);
        if (!n.hostFits(h.cpuMilli(), h.memoryMib())) throw new IllegalStateException("host request does not fit: " + h + " on " + n.name());
        recordHost(n);
        bumpVersion();
        n.freeCpuMilli -= h.cpuMilli();
        n.freeHostMemoryMib -= h.memoryMib();
    }

    /** Gives host CPU and memory of one replica back. Throws if more would be free than the node has. */
    public void releaseHost(int node, HostResources h) {
        NodeState n = nodes.get(node);
        if (n.freeCpuMilli + h.cpuMilli() > n.spec.cpuMilli() || n.freeHostMemoryMib + h.memoryMib() > n.spec.memoryMib()) {
            throw new IllegalStateException("release of host resources not held: " + h + " on " + n.name());
        }
        recordHost(n);
        bumpVersion();
        n.freeCpuMilli += h.cpuMilli();
        n.freeHostMemoryMib += h.memoryMib();
    }

    /** Gives the grants' capacity back. */
    public void release(List<GpuGrant> grants) {
        change(grants, -1, false);
    }

    /** Takes (+1) or gives back (-1) each grant's capacity, after checking the sharing rules (take) or that it is held. */
    private void change(List<GpuGrant> grants, int sign, boolean newWork) {
        NodeState pending = null;   // a node changed but not yet re-indexed: a replica's grants share one node
        try {
            for (GpuGrant g : grants) {
                NodeState n = nodes.get(g.node());
                if (n != pending && pending != null) touched(pending);
                pending = n;
                int i = g.gpu();
                if (sign > 0) {
                    boolean ok = (!newWork || n.healthy[i]) && (g.exclusive() ? n.tasks[i] == 0
                            : n.tasks[i] < n.spec.splitCount() && n.freeMilli[i] >= g.milli() && n.freeMemoryMib[i] >= g.memoryMib());
                    if (!ok) throw new IllegalStateException("grant does not fit: " + g + " on " + n.name());
                } else if (n.tasks[i] <= 0 || n.freeMilli[i] + g.milli() > GpuShare.WHOLE) {
                    throw new IllegalStateException("release of a grant not held: " + g + " on " + n.name());
                }
                record(n, i);
                usedMilli += sign * g.milli();
                n.freeMilli[i] -= sign * g.milli();
                n.freeMemoryMib[i] -= sign * g.memoryMib();
                n.tasks[i] += sign;
            }
        } finally {
            if (pending != null) touched(pending);
        }
    }

    public void setCordoned(int node, boolean cordoned) {
        NodeState n = nodes.get(node);
        if (n.cordoned != cordoned) cordonedNodes += cordoned ? 1 : -1;
        n.cordoned = cordoned;
        unjournaled();
        touched(n);
    }

    /** Marks a GPU healthy or not. Work already on it keeps its grant; no new work is placed there. */
    public void setHealthy(int node, int gpu, boolean healthy) {
        NodeState n = nodes.get(node);
        n.healthy[gpu] = healthy;
        unjournaled();
        touched(n);
    }

    private void touched(NodeState n) {
        bumpVersion();
        n.recompute();
        n.index.update(n);
    }

    // ---- journal --------------------------------------------------------------------------------

    /** Starts (or nests) a tentative section; returns the mark to roll back to. */
    public int checkpoint() {
        if (depth == versionAtMark.length) versionAtMark = java.util.Arrays.copyOf(versionAtMark, 2 * depth);
        versionAtMark[depth] = version;
        depth++;
        return journalSize;
    }

    /** Undoes every change since the mark and closes that section. */
    public void rollback(int mark) {
        NodeState pending = null;
        for (int k = journalSize - 1; k >= mark; k--) {
            NodeState n = nodes.get((int) (journalNode[k] >>> 8));
            if (n != pending && pending != null) touched(pending);
            pending = n;
            int g = (int) (journalNode[k] & 0xff);
            if (g == HOST_ENTRY) {
                bumpVersion();
                n.freeCpuMilli = journalCpu[k];
                n.freeHostMemoryMib = journalMem[k];
                continue;
            }
            usedMilli += n.freeMilli[g] - journalMilli[k];
            n.freeMilli[g] = journalMilli[k];
            n.freeMemoryMib[g] = journalMem[k];
            n.tasks[g] = journalTasks[k];
        }
        if (pending != null) touched(pending);
        journalSize = mark;
        // the state is the one at the mark again, so it gets the mark's version back (a round that only tried
        // and undid, such as an EASY reservation's search, leaves the version as it found it)
        if (!unjournaledChange) version = versionAtMark[depth - 1];
        close();
    }

    /** Keeps the changes since the mark and closes that section. */
    public void commit(int mark) {
        close();
    }

    private void close() {
        if (depth == 0) throw new IllegalStateException("no open checkpoint");
        if (--depth == 0) {
            journalSize = 0;
            unjournaledChange = false;
        }
    }

    private void record(NodeState n, int g) {
        if (depth == 0) return;
        if (journalSize == journalNode.length) grow();
        journalNode[journalSize] = ((long) n.id << 8) | g;
        journalMilli[journalSize] = n.freeMilli[g];
        journalMem[journalSize] = n.freeMemoryMib[g];
        journalTasks[journalSize] = n.tasks[g];
        journalSize++;
    }

    /** Journal slot for a node's host CPU and memory (GPU slots use the GPU index, at most 254). */
    private static final int HOST_ENTRY = 0xff;

    private void recordHost(NodeState n) {
        if (depth == 0) return;
        if (journalSize == journalNode.length) grow();
        if (journalCpu == null || journalCpu.length < journalNode.length) journalCpu = Arrays.copyOf(journalCpu == null ? new long[0] : journalCpu, journalNode.length);
        journalNode[journalSize] = ((long) n.id << 8) | HOST_ENTRY;
        journalCpu[journalSize] = n.freeCpuMilli;
        journalMem[journalSize] = n.freeHostMemoryMib;
        journalSize++;
    }

    private void grow() {
        int len = journalSize * 2;
        journalNode = Arrays.copyOf(journalNode, len);
        journalMilli = Arrays.copyOf(journalMilli, len);
        journalMem = Arrays.copyOf(journalMem, len);
        journalTasks = Arrays.copyOf(journalTasks, len);
        if (journalCpu != null) journalCpu = Arrays.copyOf(journalCpu, len);
    }

    // ---- index queries --------------------------------------------------------------------------

    /**
     * Visits schedulable nodes of the given models that may hold {@code gpus} whole GPUs (or, when
     * {@code shareMilli > 0}, one share of that size), tightest first ({@code tightestFirst}) or loosest
     * first. The visitor returns false to stop. Nodes are a superset of feasible ones only for
     * fractional requests (memory is checked by the caller). {@code gpus} 0 (a CPU-only replica) visits every
     * schedulable node of the models, fewest idle GPUs first when tightest first; the host filter decides.
     */
    public void visitCandidates(Collection<String> modelIds, int gpus, int shareMilli, boolean tightestFirst, IntPredicate visitor) {
        List<CapacityIndex> idx = indexesOf(modelIds);
        if (shareMilli > 0) {
            int lo = shareMilli / CapacityIndex.MILLI_BUCKET;
            int hi = CapacityIndex.MILLI_BUCKETS - 1;
            for (int step = 0; step <= hi - lo; step++) {
                int b = tightestFirst ? lo + step : hi - step;
                for (CapacityIndex ci : idx) {
                    if (!ci.visitShareBucket(b, visitor)) return;
                }
            }
            return;
        }
        int hi = maxGpusPerNode;
        for (int step = 0; step <= hi - gpus; step++) {
            int k = tightestFirst ? gpus + step : hi - step;
            for (CapacityIndex ci : idx) {
                if (!ci.visitFreeGpuBucket(k, visitor)) return;
            }
        }
    }

    /**
     * Visits schedulable nodes of the given models with at least {@code gpus} idle, healthy GPUs inside one
     * NVLink domain, tightest domain first ({@code tightestFirst}) or loosest first; the visitor returns
     * false to stop. For replicas that must keep to one domain: nodes without such a domain are never visited.
     */
    public void visitNvlinkCandidates(Collection<String> modelIds, int gpus, boolean tightestFirst, IntPredicate visitor) {
        List<CapacityIndex> idx = indexesOf(modelIds);
        int hi = maxGpusPerNode;
        for (int step = 0; step <= hi - gpus; step++) {
            int k = tightestFirst ? gpus + step : hi - step;
            for (CapacityIndex ci : idx) {
                if (!ci.visitNvlinkBucket(k, visitor)) return;
            }
        }
    }

    private List<CapacityIndex> indexesOf(Collection<String> modelIds) {
        if (modelIds == this.modelIds) return allIndexes;   // every model (a job that names none): no look-ups
        List<CapacityIndex> idx = new ArrayList<>(modelIds.size());
        for (String m : modelIds) {
            CapacityIndex ci = indexByModel.get(m);
            if (ci != null) idx.add(ci);
        }
        return idx;
    }

    /** Model IDs present in the pool, in the order their first nodes were added (an unmodifiable list, kept until a new model comes). */
    public List<String> modelIds() {
        return modelIds;
    }
}
