package io.gpupool.engine.state;

import java.util.List;

/** Everything a job holds, grouped by gang replica (grants of one replica are all on one node). */
public record Allocation(String jobId, List<List<GpuGrant>> replicas) {
    public Allocation {
        replicas = replicas.stream().map(List::copyOf).toList();
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
