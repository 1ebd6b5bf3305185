package io.gpupool.engine.placement.plugins;

import io.gpupool.engine.placement.ReplicaDemand;
import io.gpupool.engine.placement.WorkloadProfile;
import io.gpupool.engine.state.ClusterState;
import io.gpupool.engine.state.GpuGrant;
import io.gpupool.engine.state.NodeState;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.GpuDevice;
import io.gpupool.model.GpuModel;
import io.gpupool.model.HostResources;
import io.gpupool.model.NodeSpec;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.constraints.IntRange;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The incremental fragmentation equals the definition (Weng et al., ATC'23) computed from scratch on the
 * node as it would be after the grant: for random nodes (GPU count, split count, unhealthy GPUs, random
 * shares held, host CPU and memory taken), random workload profiles (some shapes asking for host CPU and
 * memory) and every grant the FGD policy could try, with and without a host request, and a CPU-only one.
 */
class NodeFragmentationPropertyTest {
    static final GpuModel A100 = new GpuModel("A100-80GB", "A100 80GB", 81920, 312, 312, 2039, 400, 3, 600, List.of(), "test");

    /** A share held on a GPU before the grant is tried: gpu index, milli (1000 = whole). */
    record Held(int gpu, int milli) {}

    @Provide
    Arbitrary<List<Held>> held() {
        return Combinators.combine(Arbitraries.integers().between(0, 7),
                Arbitraries.oneOf(Arbitraries.just(1000), Arbitraries.integers().between(1, 999))).as(Held::new).list().ofMaxSize(20);
    }

    @Provide
    Arbitrary<List<WorkloadProfile.Shape>> shapes() {
        // some shapes may run only on another model than the node's (A100): all free capacity is fragment for them
        Arbitrary<java.util.Set<String>> models = Arbitraries.of(java.util.Set.of(), java.util.Set.of("A100-80GB"), java.util.Set.of("T4"),
                java.util.Set.of("T4", "A100-80GB"));
        Arbitrary<HostResources> host = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(1, Arbitraries.just(HostResources.NONE)),
                net.jqwik.api.Tuple.of(2, hosts()));
        Arbitrary<WorkloadProfile.Shape> shape = Combinators.combine(Arbitraries.of(1, 2, 4, 8), Arbitraries.integers().between(1, 1000),
                models, host, Arbitraries.doubles().between(0.01, 1.0)).as((g, m, ms, h, w) -> new WorkloadProfile.Shape(m < 1000 ? 1 : g, m, ms, h, w));
        return shape.list().ofMinSize(1).ofMaxSize(12);
    }

    /** Host requests around a node's 96 cores and 1 TiB, so that some fit and some do not. */
    @Provide
    Arbitrary<HostResources> hosts() {
        return Combinators.combine(Arbitraries.longs().between(0, 64_000), Arbitraries.longs().between(0, 1 << 19)).as(HostResources::new);
    }

    @Property(tries = 300, shrinking = ShrinkingMode.BOUNDED)
    void incrementalFragmentationEqualsTheDefinitionAfterEveryTentativeGrant(
            @ForAll @IntRange(min = 1, max = 8) int gpus, @ForAll @IntRange(min = 1, max = 10) int split,
            @ForAll @IntRange(min = 0, max = 255) int unhealthyMask, @ForAll("held") List<Held> held,
            @ForAll("shapes") List<WorkloadProfile.Shape> shapes, @ForAll @IntRange(min = 1, max = 1000) int grantMilli,
            @ForAll @IntRange(min = 1, max = 8) int grantGpus, @ForAll("hosts") HostResources hostTaken,
            @ForAll("hosts") HostResources grantHost) {
        ClusterState c = new ClusterState(new ClusterSpec(List.of(node(gpus, split))));
        if (hostTaken.requested()) c.takeHost(0, hostTaken);
        for (Held h : held) {
            NodeState n = c.node(0);
            int g = h.gpu() % gpus;
            if (h.milli() == 1000 && n.isFullyFree(g)) c.apply(List.of(new GpuGrant(0, g, 1000, n.memoryCapacityMib(), true)));
            else if (h.milli() < 1000 && n.canShare(g) && n.freeMilli(g) >= h.milli()) c.apply(List.of(new GpuGrant(0, g, h.milli(), 1, false)));
        }
        for (int g = 0; g < gpus; g++) if ((unhealthyMask & (1 << g)) != 0) c.setHealthy(0, g, false);
        NodeState n = c.node(0);
        NodeFragmentation f = new NodeFragmentation(n, shapes);
        assertThat(f.now()).isEqualTo(definition(n, shapes, null, null));
        // every fractional share on each GPU where it fits, and whole-GPU sets of idle GPUs
        HostResources host = n.hostFits(grantHost.cpuMilli(), grantHost.memoryMib()) ? grantHost : HostResources.NONE;
        for (HostResources h : List.of(HostResources.NONE, host)) {
            ReplicaDemand share = new ReplicaDemand(1, grantMilli, 0, false, false, h);
            for (int g = 0; g < gpus; g++) {
                if (!n.canShare(g) || n.freeMilli(g) < grantMilli) continue;
                assertThat(f.after(share, new int[] {g})).as("share %d on GPU %d with %s", grantMilli, g, h).isEqualTo(definition(n, shapes, share, new int[] {g}));
            }
            int[] idle = IntStream.range(0, gpus).filter(n::isFullyFree).limit(grantGpus).toArray();
            if (idle.length > 0) {
                ReplicaDemand whole = new ReplicaDemand(idle.length, 1000, 0, true, false, h);
                assertThat(f.after(whole, idle)).as("whole GPUs %s with %s", java.util.Arrays.toString(idle), h).isEqualTo(definition(n, shapes, whole, idle));
            }
        }
        // a CPU-only replica: no GPU, only the host request (what it adds is the GPUs its CPU strands)
        if (host.requested()) {
            ReplicaDemand cpuOnly = new ReplicaDemand(0, 1000, 0, true, false, host);
            assertThat(f.after(cpuOnly, new int[0])).as("CPU-only %s", host).isEqualTo(definition(n, shapes, cpuOnly, new int[0]));
        }
    }

    /**
     * The definition, from scratch: per shape, free compute a task of that shape cannot use (all of it where the
     * shape may not use the node's model or the host lacks its CPU or memory), weighted.
     */
    static double definition(NodeState n, List<WorkloadProfile.Shape> shapes, ReplicaDemand grant, int[] gpus) {
        int count = n.gpuCount();
        int[] free = new int[count];
        boolean[] idle = new boolean[count];
        for (int g = 0; g < count; g++) {
            free[g] = n.healthy(g) && (n.tasks(g) == 0 || n.canShare(g)) ? n.freeMilli(g) : 0;
            idle[g] = n.isFullyFree(g);
        }
        long cpu = n.freeCpuMilli(), mem = n.freeHostMemoryMib();
        if (grant != null) {
            cpu -= grant.host().cpuMilli();
            mem -= grant.host().memoryMib();
            for (int g : gpus) {
                boolean full = grant.exclusive() || n.tasks(g) + 1 >= n.spec().splitCount();
                free[g] = full ? 0 : free[g] - grant.milli();
                idle[g] = false;
            }
        }
        double total = 0;
        for (WorkloadProfile.Shape s : shapes) {
            long frag = 0;
            int idleCount = 0;
            for (boolean b : idle) if (b) idleCount++;
            for (int g = 0; g < count; g++) {
                boolean unusable = !s.allows(n.model().id()) || cpu < s.host().cpuMilli() || mem < s.host().memoryMib()
                        || (s.milli() < 1000 ? free[g] < s.milli() : idleCount < s.gpus() || !idle[g]);
                if (unusable) frag += free[g];
            }
            total += s.weight() * frag;
        }
        return total;
    }

    static NodeSpec node(int gpus, int split) {
        List<GpuDevice> devs = new ArrayList<>();
        for (int i = 0; i < gpus; i++) devs.add(new GpuDevice(i, "GPU-" + i, A100, true));
        return new NodeSpec("n0", devs, 96_000, 1 << 20, List.of(), 1.0, split, Map.of());
    }
}
