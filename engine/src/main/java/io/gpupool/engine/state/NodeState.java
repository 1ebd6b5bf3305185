package io.gpupool.engine.state;

import io.gpupool.model.GpuModel;
import io.gpupool.model.GpuShare;
import io.gpupool.model.NodeSpec;

/**
 * Free capacity of one node: per GPU, and the host's CPU and memory. Mutated only through {@link ClusterState},
 * which journals every change so a tentative placement (a gang, a what-if) can be rolled back.
 */
public final class NodeState {
    final int id;
    final NodeSpec spec;
    final GpuModel model;
    final int[] domainOfGpu;
    final int domainCount;
    final long memoryCapacityMib;   // physical x oversubscription, per GPU
    final int[] freeMilli;
    final long[] freeMemoryMib;
    final int[] tasks;
    final boolean[] healthy;
    long freeCpuMilli;
    long freeHostMemoryMib;
    boolean cordoned;
    // Derived aggregates kept for the capacity index.
    int fullyFreeGpus;
    int maxShareableMilli;
    int maxIdleInNvlinkDomain;
    long usedMilli;
    CapacityIndex index;   // the index of this node's model, kept current by ClusterState
    private final int[] idleInDomain;   // scratch for recompute()

    NodeState(int id, NodeSpec spec) {
        this.id = id;
        this.spec = spec;
        this.model = spec.gpus().getFirst().model();
        int n = spec.gpus().size();
        this.domainOfGpu = spec.domainOfGpu();
        this.domainCount = spec.nvlinkDomains().size();
        this.memoryCapacityMib = (long) Math.floor(model.memoryMib() * spec.memoryOversubscription());
        this.freeMilli = new int[n];
        this.freeMemoryMib = new long[n];
        this.tasks = new int[n];
        this.healthy = new boolean[n];
        this.idleInDomain = new int[domainCount];
        for (int g = 0; g < n; g++) {
            freeMilli[g] = GpuShare.WHOLE;
            freeMemoryMib[g] = memoryCapacityMib;
            healthy[g] = spec.gpus().get(g).healthy();
        }
        this.freeCpuMilli = spec.cpuMilli();
        this.freeHostMemoryMib = spec.memoryMib();
        recompute();
    }

    void recompute() {
        int full = 0;
        int maxShare = -1;
        long used = 0;
        java.util.Arrays.fill(idleInDomain, 0);
        int maxInDomain = 0;
        for (int g = 0; g < freeMilli.length; g++) {
            used += GpuShare.WHOLE - freeMilli[g];
            if (!healthy[g]) continue;
            if (tasks[g] == 0) {
                full++;
                int d = domainOfGpu[g];
                if (d >= 0) maxInDomain = Math.max(maxInDomain, ++idleInDomain[d]);
            }
            if (canShare(g) && freeMilli[g] > maxShare) maxShare = freeMilli[g];
        }
        fullyFreeGpus = full;
        maxShareableMilli = maxShare;
        maxIdleInNvlinkDomain = maxInDomain;
        usedMilli = used;
    }

    /** Whether GPU g can take one more fractional task (healthy, under the split count, not held whole). */
    public boolean canShare(int g) {
        return healthy[g] && tasks[g] < spec.splitCount() && freeMilli[g] > 0;
    }

    /** Whether GPU g is idle and healthy, so it can be granted whole. */
    public boolean isFullyFree(int g) {
        return healthy[g] && tasks[g] == 0;
    }

    public int id() { return id; }
    public NodeSpec spec() { return spec; }
    public String name() { return spec.name(); }
    public GpuModel model() { return model; }
    public int gpuCount() { return freeMilli.length; }
    public int freeMilli(int g) { return freeMilli[g]; }
    public long freeMemoryMib(int g) { return freeMemoryMib[g]; }
    public int tasks(int g) { return tasks[g]; }
    public boolean healthy(int g) { return healthy[g]; }
    public boolean cordoned() { return cordoned; }
    public int domainOf(int g) { return domainOfGpu[g]; }
    public int domainCount() { return domainCount; }
    public long memoryCapacityMib() { return memoryCapacityMib; }
    public int fullyFreeGpus() { return fullyFreeGpus; }
    /** Most idle, healthy GPUs inside one NVLink domain (0 when the node has no NVLink). */
    public int maxIdleInNvlinkDomain() { return maxIdleInNvlinkDomain; }
    /** Largest free compute on a GPU that can take a share; -1 when none can. */
    public int maxShareableMilli() { return maxShareableMilli; }
    /** Compute in use over all GPUs, in thousandths of a GPU. */
    public long usedMilli() { return usedMilli; }
    /** Host CPU not granted, in thousandths of a core. */
    public long freeCpuMilli() { return freeCpuMilli; }
    /** Host memory not granted, in MiB. */
    public long freeHostMemoryMib() { return freeHostMemoryMib; }
    /** Whether the host has this much CPU and memory free. */
    public boolean hostFits(long cpuMilli, long memoryMib) {
        return freeCpuMilli >= cpuMilli && freeHostMemoryMib >= memoryMib;
    }
    /** Free compute summed over healthy GPUs that can still take work. */
    public long freeMilliTotal() {
        long f = 0;
        for (int g = 0; g < freeMilli.length; g++) if (healthy[g] && (tasks[g] == 0 || canShare(g))) f += freeMilli[g];
        return f;
    }
}
