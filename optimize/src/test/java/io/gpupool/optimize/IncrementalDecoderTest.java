package io.gpupool.optimize;

import io.gpupool.engine.state.Allocation;
import io.gpupool.engine.state.ClusterState;
import io.gpupool.engine.state.NodeState;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Decoding a chain of orders that share prefixes, keeping the shared placements, gives exactly what a full
 * pass gives for each order (the same allocations and score), and closing leaves the cluster as it was.
 */
class IncrementalDecoderTest {

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3})
    void reusingTheSharedPrefixGivesTheFullPassesAnswer(long seed) {
        BatchProblem p = InstanceGenerator.problem(60, 16, seed);
        Random rnd = new Random(seed);
        int n = p.size();
        List<int[]> orders = new ArrayList<>();
        List<boolean[]> steers = new ArrayList<>();
        int[] order = GreedySolver.Ordering.PRIORITY.order(p);
        boolean[] steer = new boolean[n];
        for (int k = 0; k < 40; k++) {
            order = order.clone();
            steer = steer.clone();
            int a = rnd.nextInt(n), b = rnd.nextInt(n);
            int t = order[a];
            order[a] = order[b];
            order[b] = t;
            if (rnd.nextBoolean()) steer[order[rnd.nextInt(n)]] ^= true;
            orders.add(order);
            steers.add(steer);
        }
        List<Map<String, Allocation>> expected = new ArrayList<>();
        List<Score> expectedScores = new ArrayList<>();
        for (int k = 0; k < orders.size(); k++) {
            EngineDecoder.Decoded d = new EngineDecoder(p).decode(orders.get(k), steers.get(k));
            expected.add(d.placement());
            expectedScores.add(d.score());
        }
        List<String> before = snapshot(p.cluster());
        try (IncrementalDecoder decoder = new IncrementalDecoder(p)) {
            for (int k = 0; k < orders.size(); k++) {
                IncrementalDecoder.Result r = decoder.decode(orders.get(k), steers.get(k));
                assertThat(r.placement()).as("order %d", k).isEqualTo(expected.get(k));
                assertThat(r.score()).as("order %d", k).isEqualTo(expectedScores.get(k));
                assertThat(r.value).isEqualTo(expectedScores.get(k).value());
            }
        }
        assertThat(snapshot(p.cluster())).as("cluster after close").isEqualTo(before);
    }

    private static List<String> snapshot(ClusterState c) {
        List<String> out = new ArrayList<>();
        out.add("used " + c.usedMilli() + " version " + c.version());
        for (NodeState node : c.nodes()) {
            for (int g = 0; g < node.gpuCount(); g++) out.add(node.name() + "/" + g + " " + node.freeMilli(g) + " " + node.freeMemoryMib(g) + " " + node.tasks(g));
        }
        return out;
    }
}
