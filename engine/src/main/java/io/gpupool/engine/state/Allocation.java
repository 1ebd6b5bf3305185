package io.gpupool.engine.state;

import java.util.List;

/** Everything a job holds, grouped by gang replica (grants of one replica are all on one node). */
public record Allocation(String jobId, List<List<GpuGrant>> replicas) {
    public Allocation {
        replicas = replicas.stream().map(List::copyOf).toList();
    }

    public List<GpuGrant> grants() {
        return replicas.stream().flatMap(List::stream).toList();
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
