package io.gpupool.sim.metrics;

import io.gpupool.engine.placement.ReplicaDemand;
import io.gpupool.engine.state.ClusterState;
import io.gpupool.engine.state.NodeState;
import io.gpupool.model.HostResources;
import io.gpupool.model.JobSpec;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Fragmentation as the free GPU capacity that no queued job can use: a free GPU (or the free part of a
 * shared one) counts when, for every queued job, it is a fragment in the sense of Weng et al. (ATC'23):
 * the job's model is not allowed there, its node lacks the idle GPUs (or, for NVLink replicas, the idle
 * GPUs in one domain) a replica needs, the GPU's free share or memory is smaller than the job's share, or
 * the node's host lacks the CPU or memory the job asks for.
 * With nothing queued nothing is fragmented (idle, not stranded). Unhealthy GPUs and cordoned nodes offer
 * no capacity.
 *
 * <p>Kept incrementally: each node's fragmented compute is cached and recomputed only when the node's
 * grants change or when the set of queued job shapes changes, so the cost per event is a few nodes, not the
 * pool.
 */
public final class FragmentationTracker {
    /** What a queued job needs, for this measure: jobs with equal keys are interchangeable. */
    private record Shape(int gpusPerReplica, boolean exclusive, int milli, long memoryMib, boolean nvlink, Set<String> models, HostResources host) {
        static Shape of(JobSpec s) {
            ReplicaDemand d = ReplicaDemand.of(s);
            return new Shape(d.gpus(), d.exclusive(), d.milli(), d.memoryMib(), d.requireNvlink() && d.gpus() > 1, s.allowedModels(), s.host());
        }

        boolean allows(String model) { return models.isEmpty() || models.contains(model); }
    }

    /**
     * For one GPU model: the smallest whole-GPU replicas queued, and the queued shares, of jobs that ask for no
     * host resources; jobs that do are kept apart ({@code withHost}) and count only on nodes whose host has room.
     */
    private static final class ModelNeeds {
        int minWhole = Integer.MAX_VALUE;       // replica size without NVLink requirement
        int minNvlink = Integer.MAX_VALUE;      // replica size that must sit in one NVLink domain
        final List<ReplicaDemand> shares = new ArrayList<>();
        final List<Shape> withHost = new ArrayList<>();

        void add(Shape s) {
            if (!s.exclusive()) shares.add(new ReplicaDemand(1, s.milli(), s.memoryMib(), false, false));
            else if (s.nvlink()) minNvlink = Math.min(minNvlink, s.gpusPerReplica());
            else minWhole = Math.min(minWhole, s.gpusPerReplica());
        }

        /** A share that needs no more compute and no more memory than another makes the other redundant. */
        void sortShares() {
            shares.sort((a, b) -> a.milli() != b.milli() ? Integer.compare(a.milli(), b.milli()) : Long.compare(a.memoryMib(), b.memoryMib()));
        }

        /** These needs plus those of the host-asking jobs this node's host can take now. */
        ModelNeeds on(NodeState n) {
            if (withHost.isEmpty()) return this;
            ModelNeeds m = new ModelNeeds();
            m.minWhole = minWhole;
            m.minNvlink = minNvlink;
            m.shares.addAll(shares);
            for (Shape s : withHost) if (n.hostFits(s.host().cpuMilli(), s.host().memoryMib())) m.add(s);
            m.sortShares();
            return m;
        }
    }

    private final ClusterState cluster;
    private final Map<Shape, int[]> queued = new HashMap<>();
    private final long[] nodeFragMilli;
    private final boolean[] dirty;
    private final int[] dirtyList;
    private int dirtyCount;
    private boolean shapesChanged = true;
    private final ModelNeeds[] needsOfNode;   // per node: its GPU model's needs (summarize), not a look-up by name per node
    private long totalFragMilli;

    public FragmentationTracker(ClusterState cluster) {
        this.cluster = cluster;
        int n = cluster.nodeCount();
        nodeFragMilli = new long[n];
        dirty = new boolean[n];
        dirtyList = new int[n];
        needsOfNode = new ModelNeeds[n];
    }

    public void queued(JobSpec job) {
        int[] c = queued.computeIfAbsent(Shape.of(job), k -> new int[1]);
        if (c[0]++ == 0) shapesChanged = true;
    }

    public void dequeued(JobSpec job) {
        Shape s = Shape.of(job);
        int[] c = queued.get(s);
        if (c == null) throw new IllegalStateException("job " + job.id() + " was not queued");
        if (--c[0] == 0) {
            queued.remove(s);
            shapesChanged = true;
        }
    }

    /** A node's grants changed. */
    public void touched(int node) {
        if (!dirty[node]) {
            dirty[node] = true;
            dirtyList[dirtyCount++] = node;
        }
    }

    /** Free compute, in milli, that no queued job can use right now. */
    public long fragmentedMilli() {
        if (shapesChanged) {
            Map<String, ModelNeeds> needs = summarize();
            String lastModel = null;   // a pool's nodes of one model mostly stand together: one look-up per run of them
            ModelNeeds lastNeeds = null;
            for (int n = 0; n < needsOfNode.length; n++) {
                String model = cluster.node(n).model().id();
                if (!model.equals(lastModel)) {
                    lastModel = model;
                    lastNeeds = needs.get(model);
                }
                needsOfNode[n] = lastNeeds;
            }
            totalFragMilli = 0;
            for (int n = 0; n < nodeFragMilli.length; n++) {
                nodeFragMilli[n] = queued.isEmpty() ? 0 : fragmentedOn(cluster.node(n));
                totalFragMilli += nodeFragMilli[n];
            }
            shapesChanged = false;
        } else if (!queued.isEmpty()) {
            for (int i = 0; i < dirtyCount; i++) {
                int n = dirtyList[i];
                long f = fragmentedOn(cluster.node(n));
                totalFragMilli += f - nodeFragMilli[n];
                nodeFragMilli[n] = f;
            }
        }
        for (int i = 0; i < dirtyCount; i++) dirty[dirtyList[i]] = false;
        dirtyCount = 0;
        return totalFragMilli;
    }

    private Map<String, ModelNeeds> summarize() {
        Map<String, ModelNeeds> out = new HashMap<>();
        for (String model : cluster.modelIds()) {
            ModelNeeds m = new ModelNeeds();
            for (Shape s : queued.keySet()) {
                if (!s.allows(model)) continue;
                if (s.host().requested()) m.withHost.add(s);
                else m.add(s);
            }
            m.sortShares();
            out.put(model, m);
        }
        return out;
    }

    private long fragmentedOn(NodeState n) {
        if (n.cordoned()) return 0;
        ModelNeeds m = needsOfNode[n.id()].on(n);
        int idle = n.fullyFreeGpus();
        int[] idleInDomain = m.minNvlink == Integer.MAX_VALUE ? null : idlePerDomain(n);
        long frag = 0;
        for (int g = 0; g < n.gpuCount(); g++) {
            int free = n.freeMilli(g);
            if (!n.healthy(g) || free == 0) continue;
            boolean usable = false;
            if (n.isFullyFree(g)) {
                usable = idle >= m.minWhole
                        || (idleInDomain != null && n.domainOf(g) >= 0 && idleInDomain[n.domainOf(g)] >= m.minNvlink);
            }
            if (!usable && n.canShare(g)) {
                for (ReplicaDemand s : m.shares) {
                    if (s.milli() > free) break;
                    if (n.freeMemoryMib(g) >= s.memoryOn(n.model(), n.memoryCapacityMib())) {
                        usable = true;
                        break;
                    }
                }
            }
            if (!usable) frag += free;
        }
        return frag;
    }

    private static int[] idlePerDomain(NodeState n) {
        int[] c = new int[Math.max(1, n.domainCount())];
        for (int g = 0; g < n.gpuCount(); g++) if (n.isFullyFree(g) && n.domainOf(g) >= 0) c[n.domainOf(g)]++;
        return c;
    }
}
