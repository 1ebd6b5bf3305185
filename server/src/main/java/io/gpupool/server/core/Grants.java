package io.gpupool.server.core;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gpupool.agent.protocol.Grant;
import io.gpupool.engine.state.Allocation;
import io.gpupool.engine.state.ClusterState;
import io.gpupool.engine.state.GpuGrant;
import io.gpupool.engine.state.NodeState;
import io.gpupool.store.GrantRow;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Where a job's grants change form, each conversion once: the engine's allocation (node ids) becomes {@link Grant}s
 * (node names and GPU UUIDs), which the API shows as they are; from those come the store's rows, an attempt's record
 * and the event text, and from the store's rows the engine's allocation again after a restart. The agent's form is
 * {@link io.gpupool.agent.protocol.GrantedGpu#of}.
 */
final class Grants {
    private static final ObjectMapper JSON = new ObjectMapper();

    private Grants() {
    }

    /** An allocation's grants, replica by replica, by node name and GPU UUID; none for no allocation. */
    static List<Grant> of(Allocation a, ClusterState cluster) {
        return of(a, cluster, ALL_NODES);
    }

    /** The allocation's grants on one node (its engine id), in the same order. */
    static List<Grant> onNode(Allocation a, ClusterState cluster, int node) {
        return of(a, cluster, node);
    }

    private static final int ALL_NODES = -1;

    private static List<Grant> of(Allocation a, ClusterState cluster, int onlyNode) {
        if (a == null) return List.of();
        List<Grant> out = new ArrayList<>();
        for (int r = 0; r < a.replicas().size(); r++) {
            for (GpuGrant g : a.replicas().get(r)) {
                if (onlyNode != ALL_NODES && g.node() != onlyNode) continue;
                NodeState n = cluster.node(g.node());
                out.add(new Grant(r, n.name(), g.gpu(), n.spec().gpus().get(g.gpu()).uuid(), g.milli(), g.memoryMib(), g.exclusive()));
            }
        }
        return out;
    }

    /** The store's rows of a running job's grants. */
    static List<GrantRow> rows(List<Grant> grants) {
        List<GrantRow> out = new ArrayList<>(grants.size());
        for (Grant g : grants) out.add(new GrantRow(g.replica(), g.node(), g.gpu(), g.milli(), g.memoryMib(), g.exclusive()));
        return out;
    }

    /** The nodes the stored grants are on, in name order. */
    static Set<String> nodes(List<GrantRow> rows) {
        Set<String> out = new TreeSet<>();
        for (GrantRow g : rows) out.add(g.node());
        return out;
    }

    /**
     * The engine's allocation of a job from its stored grants (after a restart).
     *
     * @throws IllegalStateException when a grant's node is no longer in the pool
     */
    static Allocation allocation(String jobId, List<GrantRow> rows, ClusterState cluster) {
        Map<Integer, List<GpuGrant>> byReplica = new TreeMap<>();
        for (GrantRow g : rows) {
            Integer node = cluster.nodeId(g.node());
            if (node == null) throw new IllegalStateException("node " + g.node() + " is no longer in the pool");
            byReplica.computeIfAbsent(g.replica(), k -> new ArrayList<>()).add(new GpuGrant(node, g.gpu(), g.milli(), g.memoryMib(), g.exclusive()));
        }
        return new Allocation(jobId, List.copyOf(byReplica.values()));
    }

    /** The grants on one node as its attempt's row records them: the API's form without the node (the row has it). */
    static String attemptJson(List<Grant> grants, String node) {
        ArrayNode out = JSON.createArrayNode();
        for (Grant g : grants) {
            if (!g.node().equals(node)) continue;
            ObjectNode o = JSON.valueToTree(g);
            o.remove("node");
            out.add(o);
        }
        try {
            return JSON.writeValueAsString(out);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** For a job's events: "n1 GPU 0,1; n2 GPU 3(50%,20000MiB)". */
    static String describe(List<Grant> grants) {
        Map<String, List<String>> byNode = new LinkedHashMap<>();
        for (Grant g : grants) {
            byNode.computeIfAbsent(g.node(), k -> new ArrayList<>())
                    .add(g.gpu() + (g.exclusive() ? "" : "(" + g.milli() / 10 + "%," + g.memoryMib() + "MiB)"));
        }
        List<String> parts = new ArrayList<>();
        byNode.forEach((n, gs) -> parts.add(n + " GPU " + String.join(",", gs)));
        return String.join("; ", parts);
    }
}
