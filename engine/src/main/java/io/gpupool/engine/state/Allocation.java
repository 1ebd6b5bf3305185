package io.gpupool.engine.state;

import io.gpupool.model.HostResources;

import java.util.ArrayList;
import java.util.List;

/**
 * Everything a job holds, grouped by gang replica (grants of one replica are all on one node), the node each
 * replica is on, and the host CPU and memory each replica holds there ({@link HostResources#NONE} for a job
 * that asks for none). A replica of a CPU-only job has no grants: {@code replicaNodes} is where its host
 * request is held.
 */
public record Allocation(String jobId, List<List<GpuGrant>> replicas, HostResources hostPerReplica, List<Integer> replicaNodes) {
    public Allocation {
        replicas = copyOfEach(replicas);
        if (hostPerReplica == null) hostPerReplica = HostResources.NONE;
        if (replicaNodes == null) {
            List<Integer> nodes = new ArrayList<>(replicas.size());
            for (List<GpuGrant> r : replicas) {
                if (r.isEmpty()) throw new IllegalArgumentException("job " + jobId + ": a replica without GPUs needs its node given");
                nodes.add(r.getFirst().node());
            }
            replicaNodes = nodes;
        }
        replicaNodes = List.copyOf(replicaNodes);
        if (replicaNodes.size() != replicas.size()) {
            throw new IllegalArgumentException("job " + jobId + ": " + replicas.size() + " replicas but " + replicaNodes.size() + " nodes");
        }
        for (int r = 0; r < replicas.size(); r++) {
            if (!replicas.get(r).isEmpty() && replicas.get(r).getFirst().node() != replicaNodes.get(r)) {
                throw new IllegalArgumentException("job " + jobId + ": replica " + r + " has grants off its node " + replicaNodes.get(r));
            }
        }
    }

    /** An unmodifiable copy of each replica's grants (no copy of one already unmodifiable), in an unmodifiable list; a loop, not a stream: every start makes one. */
    @SuppressWarnings("unchecked")
    private static List<List<GpuGrant>> copyOfEach(List<List<GpuGrant>> replicas) {
        List<GpuGrant>[] copies = new List[replicas.size()];
        for (int r = 0; r < copies.length; r++) copies[r] = List.copyOf(replicas.get(r));
        return List.of(copies);
    }

    /** An allocation whose replicas all hold GPUs: each replica's node is its grants' node. */
    public Allocation(String jobId, List<List<GpuGrant>> replicas, HostResources hostPerReplica) {
        this(jobId, replicas, hostPerReplica, null);
    }

    /** An allocation of GPUs only (no host resources asked for). */
    public Allocation(String jobId, List<List<GpuGrant>> replicas) {
        this(jobId, replicas, HostResources.NONE, null);
    }

    /** The node replica r runs on. */
    public int nodeOf(int replica) {
        return replicaNodes.get(replica);
    }

    /** All grants, replica after replica (no copy for the common single-replica job: it is on every release path). */
    public List<GpuGrant> grants() {
        if (replicas.size() == 1) return replicas.getFirst();
        List<GpuGrant> all = new ArrayList<>();
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
        return (int) replicaNodes.stream().distinct().count();
    }
}
