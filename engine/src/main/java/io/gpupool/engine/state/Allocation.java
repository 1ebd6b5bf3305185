package io.gpupool.engine.state;

import io.gpupool.model.HostResources;

import java.util.List;

/**
 * Everything a job holds, grouped by gang replica (grants of one replica are all on one node), and the host
 * CPU and memory each replica holds on its node ({@link HostResources#NONE} for a job that asks for none).
 */
public record Allocation(String jobId, List<List<GpuGrant>> replicas, HostResources hostPerReplica) {
    public Allocation {
        replicas = replicas.stream().map(List::copyOf).toList();
        if (hostPerReplica == null) hostPerReplica = HostResources.NONE;
    }

    /** An allocation of GPUs only (no host resources asked for). */
    public Allocation(String jobId, List<List<GpuGrant>> replicas) {
        this(jobId, replicas, HostResources.NONE);
    }

    /** The node replica r runs on. */
    public int nodeOf(int replica) {
        return replicas.get(replica).getFirst().node();
    }

    /** All grants, replica after replica (no copy for the common single-replica job: it is on every release path). */
    public List<GpuGrant> grants() {
        if (replicas.size() == 1) return replicas.getFirst();
        List<GpuGrant> all = new java.util.ArrayList<>();
        for (List<GpuGrant> r : replicas) all.addAll(r);
        return java.util.Collections.unmodifiableList(all);
    }

    public long gpuMilli() {
        return grants().stream().mapToLong(GpuGrant::milli).sum();
    }

    public long memoryMib() {
        return grants().stream().mapToLong(GpuGrant::memoryMib).sum();
    }

    public int nodesUsed() {
        return (int) grants().stream().mapToInt(GpuGrant::node).distinct().count();
    }
}
