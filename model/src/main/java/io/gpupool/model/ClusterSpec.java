package io.gpupool.model;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** The GPU servers of a pool. Node names are unique. */
public record ClusterSpec(List<NodeSpec> nodes) {
    public ClusterSpec {
        nodes = List.copyOf(nodes);
        Set<String> names = new HashSet<>();
        for (NodeSpec n : nodes) {
            if (!names.add(n.name())) throw new SpecException("cluster", "nodes", "node name '" + n.name() + "' appears twice");
        }
    }

    public int totalGpus() {
        return nodes.stream().mapToInt(n -> n.gpus().size()).sum();
    }

    public int maxGpusPerNode() {
        return nodes.stream().mapToInt(n -> n.gpus().size()).max().orElse(0);
    }
}
