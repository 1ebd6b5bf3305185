package io.gpupool.engine.property;

import io.gpupool.engine.state.ClusterState;
import io.gpupool.engine.state.NodeState;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.GpuDevice;
import io.gpupool.model.GpuModel;
import io.gpupool.model.NodeSpec;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.IntStream;

/**
 * Random heterogeneous pools for the property tests, built from model records directly (no catalog).
 * A generated node is a small, shrinkable record; {@link #spec} turns a list of them into a ClusterSpec.
 */
final class PropertyPools {
    private PropertyPools() {}

    static final GpuModel A100 = new GpuModel("A100-80GB", "A100 80GB", 81920, 312, 312, 2039, 400, 3, 600, List.of(), "test");
    static final GpuModel H100 = new GpuModel("H100-80GB", "H100 80GB", 81559, 989, 989, 3350, 700, 4, 900, List.of(), "test");
    static final GpuModel T4 = new GpuModel("T4", "T4", 15360, 0, 65, 320, 70, 0, 0, List.of(), "test");
    static final GpuModel L4 = new GpuModel("L4", "L4", 23034, 121, 121, 300, 72, 0, 0, List.of(), "test");
    static final List<GpuModel> MODELS = List.of(A100, H100, T4, L4);
    /** Allowed-model lists may name this model, which no pool has. */
    static final String ABSENT_MODEL = "V100-16GB";
    /** Host CPU (milli) and memory (MiB) a generated node may have: roomy, medium, small. */
    static final long[][] HOSTS = {{96_000, 1 << 20}, {16_000, 65_536}, {4_000, 16_384}};

    /**
     * One generated node.
     *
     * @param model        index into {@link #MODELS}
     * @param gpus         1..8
     * @param oversub      memory oversubscription, 1.0..2.0
     * @param split        split count 1..10
     * @param domainOfGpu  NVLink domain id per GPU slot (-1 = no NVLink); only the first {@code gpus} count
     * @param unhealthy    per GPU slot, unhealthy at registration
     * @param cordoned     cordoned before the run starts
     * @param host         index into {@link #HOSTS}: the node's host CPU and memory
     */
    record NodeGen(int model, int gpus, double oversub, int split, List<Integer> domainOfGpu, List<Boolean> unhealthy, boolean cordoned, int host) {
        @Override
        public String toString() {
            return MODELS.get(model).id() + "x" + gpus + "(os=" + oversub + ",split=" + split + ",dom=" + domainOfGpu.subList(0, gpus)
                    + ",bad=" + unhealthyIndices() + (cordoned ? ",cordoned" : "") + ",host=" + HOSTS[host][0] + "m/" + HOSTS[host][1] + "MiB)";
        }

        List<Integer> unhealthyIndices() {
            return IntStream.range(0, gpus).filter(unhealthy::get).boxed().toList();
        }
    }

    static Arbitrary<NodeGen> nodes(boolean withFaults) {
        Arbitrary<Integer> model = Arbitraries.integers().between(0, MODELS.size() - 1);
        Arbitrary<Integer> gpus = Arbitraries.integers().between(1, 8);
        Arbitrary<Double> oversub = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(2, Arbitraries.just(1.0)),
                net.jqwik.api.Tuple.of(1, Arbitraries.doubles().between(1.0, 2.0).ofScale(2)));
        Arbitrary<Integer> split = Arbitraries.integers().between(1, 10);
        Arbitrary<List<Integer>> domains = Arbitraries.integers().between(-1, 2).list().ofSize(8);
        Arbitrary<List<Boolean>> unhealthy = withFaults
                ? Arbitraries.integers().between(0, 9).map(x -> x == 0).list().ofSize(8)
                : Arbitraries.just(List.of(false, false, false, false, false, false, false, false));
        Arbitrary<Boolean> cordoned = withFaults ? Arbitraries.integers().between(0, 7).map(x -> x == 0) : Arbitraries.just(false);
        Arbitrary<Integer> host = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(2, Arbitraries.just(0)),
                net.jqwik.api.Tuple.of(1, Arbitraries.integers().between(1, HOSTS.length - 1)));
        return Combinators.combine(model, gpus, oversub, split, domains, unhealthy, cordoned, host).as(NodeGen::new);
    }

    static Arbitrary<List<NodeGen>> clusters(int maxNodes, boolean withFaults) {
        return nodes(withFaults).list().ofMinSize(1).ofMaxSize(maxNodes);
    }

    static ClusterSpec spec(List<NodeGen> gens) {
        List<NodeSpec> nodes = new ArrayList<>();
        for (int i = 0; i < gens.size(); i++) {
            NodeGen g = gens.get(i);
            GpuModel m = MODELS.get(g.model());
            String name = "n" + i;
            List<GpuDevice> devs = new ArrayList<>();
            for (int k = 0; k < g.gpus(); k++) devs.add(new GpuDevice(k, "GPU-" + name + "-" + k, m, !g.unhealthy().get(k)));
            Map<Integer, List<Integer>> byDomain = new TreeMap<>();
            for (int k = 0; k < g.gpus(); k++) {
                int d = g.domainOfGpu().get(k);
                if (d >= 0 && m.hasNvlink()) byDomain.computeIfAbsent(d, x -> new ArrayList<>()).add(k);
            }
            nodes.add(new NodeSpec(name, devs, HOSTS[g.host()][0], HOSTS[g.host()][1], new ArrayList<>(byDomain.values()), g.oversub(), g.split(), Map.of()));
        }
        return new ClusterSpec(nodes);
    }

    static NodeSpec uniformNode(String name, GpuModel model, int gpus) {
        List<GpuDevice> devs = IntStream.range(0, gpus).mapToObj(i -> new GpuDevice(i, "GPU-" + name + "-" + i, model, true)).toList();
        List<List<Integer>> dom = model.hasNvlink() ? List.of(IntStream.range(0, gpus).boxed().toList()) : List.of();
        return new NodeSpec(name, devs, 96_000, 1 << 20, dom, 1.0, 10, Map.of());
    }

    /** Exactly {@code gpus} GPUs: 8-GPU nodes and one node with the rest. */
    static ClusterSpec poolOf(int gpus, GpuModel model) {
        List<NodeSpec> nodes = new ArrayList<>();
        for (int left = gpus, i = 0; left > 0; left -= 8, i++) nodes.add(uniformNode("n" + i, model, Math.min(8, left)));
        return new ClusterSpec(nodes);
    }

    static ClusterSpec uniform(int nodes, int gpus, GpuModel model) {
        return new ClusterSpec(IntStream.range(0, nodes).mapToObj(i -> uniformNode("n" + i, model, gpus)).toList());
    }

    // ---- snapshots of the capacity state ----------------------------------------------------------

    /** Everything observable about the capacity state: per GPU free compute, memory, tasks; per node aggregates and free host. */
    static String snapshot(ClusterState c) {
        StringBuilder sb = new StringBuilder();
        for (NodeState n : c.nodes()) {
            sb.append(n.name()).append(n.cordoned() ? "[C]" : "").append(" ffg=").append(n.fullyFreeGpus())
                    .append(" maxShare=").append(n.maxShareableMilli()).append(" nvl=").append(n.maxIdleInNvlinkDomain()).append(" used=").append(n.usedMilli())
                    .append(" host=").append(n.freeCpuMilli()).append('/').append(n.freeHostMemoryMib()).append(" {");
            for (int g = 0; g < n.gpuCount(); g++) {
                sb.append(g).append(':').append(n.freeMilli(g)).append('/').append(n.freeMemoryMib(g)).append('/').append(n.tasks(g))
                        .append(n.healthy(g) ? "" : "!").append(' ');
            }
            sb.append("}\n");
        }
        return sb.toString();
    }

    /**
     * Requests the index is asked in snapshots: {whole GPUs, share milli, inside one NVLink domain (1)}, asked
     * in both visiting orders.
     */
    static final int[][] INDEX_QUERIES = {{1, 0, 0}, {2, 0, 0}, {4, 0, 0}, {8, 0, 0}, {1, 1, 0}, {1, 250, 0}, {1, 500, 0},
            {1, 999, 0}, {1, 1000, 0}, {2, 0, 1}, {3, 0, 1}, {4, 0, 1}, {8, 0, 1}};

    /** Asks the index one of {@link #INDEX_QUERIES}. */
    static void visit(ClusterState c, Collection<String> models, int[] q, boolean tight, java.util.function.IntPredicate v) {
        if (q[2] == 1) c.visitNvlinkCandidates(models, q[0], tight, v);
        else c.visitCandidates(models, q[0], q[1], tight, v);
    }

    /** The bucket a node is in for a query: what the index sorts by. */
    static int bucketOf(ClusterState c, NodeState n, int[] q) {
        if (q[1] > 0) return n.maxShareableMilli() / 50;
        return Math.min(q[2] == 1 ? n.maxIdleInNvlinkDomain() : n.fullyFreeGpus(), c.maxGpusPerNode());
    }

    /** The exact visiting order of the capacity index for a fixed set of queries. */
    static List<List<Integer>> indexOrder(ClusterState c) {
        List<List<Integer>> out = new ArrayList<>();
        List<Collection<String>> modelSets = new ArrayList<>();
        modelSets.add(c.modelIds());
        for (String m : c.modelIds()) modelSets.add(List.of(m));
        for (Collection<String> ms : modelSets) {
            for (int[] q : INDEX_QUERIES) {
                for (boolean tight : new boolean[] {true, false}) {
                    List<Integer> seen = new ArrayList<>();
                    visit(c, ms, q, tight, id -> { seen.add(id); return true; });
                    out.add(seen);
                }
            }
        }
        return out;
    }

    /**
     * The index's answer up to the order of nodes inside one bucket (which depends on update history):
     * for each query, the sequence of (bucket, model) groups visited, each group's nodes sorted.
     */
    static List<String> indexCanonical(ClusterState c) {
        List<String> out = new ArrayList<>();
        List<Collection<String>> modelSets = new ArrayList<>();
        modelSets.add(c.modelIds());
        for (String m : c.modelIds()) modelSets.add(List.of(m));
        for (Collection<String> ms : modelSets) {
            for (int[] q : INDEX_QUERIES) {
                for (boolean tight : new boolean[] {true, false}) {
                    List<Integer> seen = new ArrayList<>();
                    visit(c, ms, q, tight, id -> { seen.add(id); return true; });
                    StringBuilder sb = new StringBuilder(ms + " " + Arrays.toString(q) + " " + tight + ":");
                    String groupKey = null;
                    List<Integer> group = new ArrayList<>();
                    for (int id : seen) {
                        NodeState n = c.node(id);
                        int bucket = bucketOf(c, n, q);
                        String k = bucket + "/" + n.model().id();
                        if (!k.equals(groupKey)) {
                            if (groupKey != null) sb.append(' ').append(groupKey).append(group.stream().sorted().toList());
                            groupKey = k;
                            group = new ArrayList<>();
                        }
                        group.add(id);
                    }
                    if (groupKey != null) sb.append(' ').append(groupKey).append(group.stream().sorted().toList());
                    out.add(sb.toString());
                }
            }
        }
        return out;
    }
}
