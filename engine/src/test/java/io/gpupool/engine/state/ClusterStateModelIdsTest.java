package io.gpupool.engine.state;

import io.gpupool.model.ClusterSpec;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.function.IntPredicate;

import static io.gpupool.engine.TestPools.A100;
import static io.gpupool.engine.TestPools.T4;
import static io.gpupool.engine.TestPools.node;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The cluster keeps its model list (and the capacity indexes of all models) instead of copying them per placement:
 * both must follow nodes of a new model added later.
 */
class ClusterStateModelIdsTest {

    /** The models of the nodes in the order their first nodes came: what the kept list must equal. */
    private static List<String> plainModelIds(ClusterState cluster) {
        return cluster.nodes().stream().map(n -> n.model().id()).distinct().toList();
    }

    private static List<Integer> visited(ClusterState cluster, int gpus) {
        List<Integer> out = new ArrayList<>();
        IntPredicate all = id -> { out.add(id); return true; };
        cluster.visitCandidates(cluster.modelIds(), gpus, 0, true, all);
        return out;
    }

    @Test
    void aNodeOfANewModelJoinsTheListAndTheCandidates() {
        ClusterState cluster = new ClusterState(new ClusterSpec(List.of(node("t4-0", T4, 2, List.of(), 1.0, 10))));
        assertThat(cluster.modelIds()).containsExactly("T4").isEqualTo(plainModelIds(cluster));
        assertThat(visited(cluster, 1)).containsExactly(0);

        cluster.addNode(node("t4-1", T4, 2, List.of(), 1.0, 10));
        assertThat(cluster.modelIds()).isEqualTo(plainModelIds(cluster));
        cluster.addNode(node("a100-0", A100, 4, List.of(List.of(0, 1, 2, 3)), 1.0, 10));
        assertThat(cluster.modelIds()).containsExactly("T4", "A100-80GB").isEqualTo(plainModelIds(cluster));
        // a job that names no model is offered the new model's node too (only it has 4 GPUs)
        assertThat(visited(cluster, 4)).containsExactly(2);
        assertThat(visited(cluster, 1)).containsExactlyInAnyOrder(0, 1, 2);
        // the same as naming every model in a list of its own (the look-up path)
        List<Integer> named = new ArrayList<>();
        cluster.visitCandidates(new ArrayList<>(plainModelIds(cluster)), 1, 0, true, id -> { named.add(id); return true; });
        assertThat(visited(cluster, 1)).isEqualTo(named);
    }
}
