package io.gpupool.engine.placement.plugins;

import io.gpupool.engine.placement.CycleState;
import io.gpupool.engine.placement.GpuSelector;
import io.gpupool.engine.placement.ReplicaDemand;
import io.gpupool.engine.state.ClusterState;
import io.gpupool.engine.state.GpuGrant;
import io.gpupool.engine.state.NodeState;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.GpuDevice;
import io.gpupool.model.GpuModel;
import io.gpupool.model.JobSpec;
import io.gpupool.model.NodeSpec;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The GPU policies count free GPUs per NVLink domain in one buffer that a placement reuses over the nodes it visits
 * ({@link CycleState#scratchCounts}): every node's choice must be the one a fresh placement state gives.
 */
class ScratchCountsTest {
    static final GpuModel A100 = new GpuModel("A100-80GB", "A100 80GB", 81920, 312, 312, 2039, 400, 3, 600, List.of(), "test");

    @Test
    void aReusedBufferComesBackZeroed() {
        CycleState cycle = new CycleState(new ClusterState(new ClusterSpec(List.of())), JobSpec.builder("j").gpus(1).build(), null, null);
        int[] first = cycle.scratchCounts(12);
        Arrays.fill(first, 7);
        int[] again = cycle.scratchCounts(12);
        assertThat(again).isSameAs(first);
        assertThat(Arrays.copyOf(again, 12)).containsOnly(0);
        assertThat(cycle.scratchCounts(40).length).isGreaterThanOrEqualTo(40);
    }

    @Test
    void everyNodesChoiceWithTheSharedBufferIsAFreshStatesChoice() {
        Random rnd = new Random(16);
        for (int trial = 0; trial < 200; trial++) {
            List<NodeSpec> nodes = new ArrayList<>();
            for (int i = 0; i < 12; i++) nodes.add(node("n" + i, 2 + rnd.nextInt(7), rnd));
            ClusterState cluster = new ClusterState(new ClusterSpec(nodes));
            // random GPUs taken whole
            List<GpuGrant> taken = new ArrayList<>();
            for (NodeState n : cluster.nodes()) {
                for (int g = 0; g < n.gpuCount(); g++) if (rnd.nextInt(3) == 0) taken.add(new GpuGrant(n.id(), g, 1000, 0, true));
            }
            cluster.apply(taken);
            for (GpuSelector policy : List.of(new BinpackGpuSelector(), new SpreadGpuSelector())) {
                for (int k = 1; k <= 8; k++) {
                    for (boolean nvlink : List.of(false, true)) {
                        JobSpec job = JobSpec.builder("j").shape(1, k).requireNvlink(nvlink).build();
                        ReplicaDemand demand = ReplicaDemand.of(job);
                        CycleState shared = new CycleState(cluster, job, null, null);
                        for (NodeState n : cluster.nodes()) {
                            int[] reused = policy.select(shared, demand, n);
                            int[] fresh = policy.select(new CycleState(cluster, job, null, null), demand, n);
                            assertThat(reused).as("trial %d, %s, %d GPUs, nvlink %s, node %s", trial, policy.name(), k, nvlink, n.name())
                                    .isEqualTo(fresh);
                        }
                    }
                }
            }
        }
    }

    /** A node of {@code gpus} GPUs whose first GPUs form random NVLink domains (the rest have none). */
    private static NodeSpec node(String name, int gpus, Random rnd) {
        List<GpuDevice> devs = IntStream.range(0, gpus).mapToObj(i -> new GpuDevice(i, "GPU-" + name + "-" + i, A100, true)).toList();
        List<List<Integer>> domains = new ArrayList<>();
        int g = 0;
        while (g < gpus && rnd.nextInt(4) > 0) {
            int size = 1 + rnd.nextInt(gpus - g);
            domains.add(IntStream.range(g, g + size).boxed().toList());
            g += size;
        }
        return new NodeSpec(name, devs, 96_000, 1 << 20, domains, 1.0, 10, Map.of());
    }
}
