package io.gpupool.engine.property;

import io.gpupool.engine.state.ClusterState;
import io.gpupool.engine.state.GpuGrant;
import io.gpupool.engine.state.NodeState;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.HostResources;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.Tuple;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * ClusterState's journal: random apply/release sequences inside nested checkpoints, then rollback, restore
 * the exact prior state; commit keeps it; and the capacity index always answers as a fresh ClusterState
 * holding the same grants would (and as the ground truth of the nodes' free capacity says).
 */
class CheckpointRollbackPropertyTest {

    sealed interface Op permits Apply, Release, TakeHost, ReleaseHost, Checkpoint, Rollback, Commit, Cordon, Health {}

    /** A grant on node/gpu; whole, or a share clamped to what is free. */
    record Apply(int node, int gpu, boolean exclusive, int milli, long memMib) implements Op {}

    record Release(int pick) implements Op {}

    /** Host CPU and memory on a node, clamped to what is free. */
    record TakeHost(int node, long cpuMilli, long memoryMib) implements Op {}

    record ReleaseHost(int pick) implements Op {}

    /** Host resources held on a node. */
    record HeldHost(int node, HostResources host) {}

    record Checkpoint() implements Op {}

    record Rollback() implements Op {}

    record Commit() implements Op {}

    record Cordon(int node, boolean cordoned) implements Op {}

    record Health(int node, int gpu, boolean healthy) implements Op {}

    @Provide
    Arbitrary<List<PropertyPools.NodeGen>> clusters() {
        return PropertyPools.clusters(12, true);
    }

    @Provide
    Arbitrary<List<Op>> ops() {
        Arbitrary<Integer> node = Arbitraries.integers().between(0, 11);
        Arbitrary<Integer> gpu = Arbitraries.integers().between(0, 7);
        Arbitrary<Op> apply = Combinators.combine(node, gpu, Arbitraries.of(true, false), Arbitraries.integers().between(1, 1000),
                Arbitraries.longs().between(0, 90_000)).as(Apply::new);
        @SuppressWarnings({"unchecked", "rawtypes"})
        Arbitrary<Op> op = (Arbitrary<Op>) (Arbitrary) Arbitraries.frequencyOf(
                Tuple.of(8, apply),
                Tuple.of(4, Arbitraries.integers().between(0, 1000).map(Release::new)),
                Tuple.of(2, Combinators.combine(node, Arbitraries.longs().between(0, 40_000), Arbitraries.longs().between(0, 300_000)).as(TakeHost::new)),
                Tuple.of(1, Arbitraries.integers().between(0, 1000).map(ReleaseHost::new)),
                Tuple.of(2, Arbitraries.just(new Checkpoint())),
                Tuple.of(1, Arbitraries.just(new Rollback())),
                Tuple.of(1, Arbitraries.just(new Commit())),
                Tuple.of(1, Combinators.combine(node, Arbitraries.of(true, false)).as(Cordon::new)),
                Tuple.of(1, Combinators.combine(node, gpu, Arbitraries.of(true, false)).as(Health::new)));
        return op.list().ofMinSize(1).ofMaxSize(120);
    }

    /** What the test remembers at a checkpoint. */
    private record Saved(int mark, String state, List<String> index, List<GpuGrant> held, List<HeldHost> hosts, long version) {}

    @Property(tries = 300, shrinking = ShrinkingMode.BOUNDED)
    void rollbackRestoresTheExactPriorStateAndTheIndexMatchesAFreshState(
            @ForAll("clusters") List<PropertyPools.NodeGen> cluster, @ForAll("ops") List<Op> ops) {
        ClusterSpec spec = PropertyPools.spec(cluster);
        ClusterState c = new ClusterState(spec);
        List<GpuGrant> held = new ArrayList<>();
        List<HeldHost> hosts = new ArrayList<>();
        Deque<Saved> open = new ArrayDeque<>();
        java.util.Map<Long, String> stateAtVersion = new java.util.HashMap<>();
        for (Op op : ops) {
            switch (op) {
                case Apply a -> {
                    GpuGrant g = fitting(c, a);
                    if (g != null) {
                        c.apply(List.of(g));
                        held.add(g);
                    }
                }
                case Release r -> {
                    if (!held.isEmpty()) c.release(List.of(held.remove(r.pick() % held.size())));
                }
                case TakeHost t -> {
                    NodeState n = c.node(t.node() % c.nodeCount());
                    HostResources h = new HostResources(Math.min(t.cpuMilli(), n.freeCpuMilli()), Math.min(t.memoryMib(), n.freeHostMemoryMib()));
                    c.takeHost(n.id(), h);
                    hosts.add(new HeldHost(n.id(), h));
                }
                case ReleaseHost r -> {
                    if (!hosts.isEmpty()) {
                        HeldHost h = hosts.remove(r.pick() % hosts.size());
                        c.releaseHost(h.node(), h.host());
                    }
                }
                case Checkpoint x -> {
                    String state = PropertyPools.snapshot(c);
                    List<String> index = PropertyPools.indexCanonical(c);
                    long version = c.version();
                    int mark = c.checkpoint();
                    open.push(new Saved(mark, state, index, List.copyOf(held), List.copyOf(hosts), version));
                }
                case Rollback x -> {
                    if (open.isEmpty()) continue;
                    Saved s = open.pop();
                    c.rollback(s.mark());
                    assertThat(PropertyPools.snapshot(c)).as("state after rollback").isEqualTo(s.state());
                    assertThat(PropertyPools.indexCanonical(c)).as("capacity index after rollback").isEqualTo(s.index());
                    assertThat(c.version()).as("the state at the mark has the mark's version again").isEqualTo(s.version());
                    held.clear();
                    held.addAll(s.held());
                    hosts.clear();
                    hosts.addAll(s.hosts());
                }
                case Commit x -> {
                    if (open.isEmpty()) continue;
                    c.commit(open.pop().mark());
                }
                // node flags are not journaled: change them only outside tentative sections
                case Cordon cd -> {
                    if (open.isEmpty()) c.setCordoned(cd.node() % c.nodeCount(), cd.cordoned());
                }
                case Health h -> {
                    if (open.isEmpty()) {
                        NodeState n = c.node(h.node() % c.nodeCount());
                        c.setHealthy(n.id(), h.gpu() % n.gpuCount(), h.healthy());
                    }
                }
            }
            assertMatchesFresh(spec, c, held, hosts);
            // memos rely on it: one version, one state (a rollback gives an old version back, never a new state an old one)
            String now = PropertyPools.snapshot(c);
            assertThat(stateAtVersion.computeIfAbsent(c.version(), v -> now)).as("state at version " + c.version()).isEqualTo(now);
        }
        while (!open.isEmpty()) {
            Saved s = open.pop();
            c.rollback(s.mark());
            assertThat(PropertyPools.snapshot(c)).as("state after final rollback").isEqualTo(s.state());
            held.clear();
            held.addAll(s.held());
            hosts.clear();
            hosts.addAll(s.hosts());
            assertMatchesFresh(spec, c, held, hosts);
            // memos rely on it: one version, one state (a rollback gives an old version back, never a new state an old one)
            String now = PropertyPools.snapshot(c);
            assertThat(stateAtVersion.computeIfAbsent(c.version(), v -> now)).as("state at version " + c.version()).isEqualTo(now);
        }
    }

    /**
     * Stricter: a checkpoint followed by any changes and a rollback leaves the index's visiting order
     * exactly as it was, so a dry run (a reservation, a preemption what-if) cannot change which node a
     * later placement picks among equally good ones.
     */
    @Property(tries = 200, shrinking = ShrinkingMode.BOUNDED)
    void rollbackRestoresTheIndexVisitingOrderExactly(
            @ForAll("clusters") List<PropertyPools.NodeGen> cluster, @ForAll("ops") List<Op> before, @ForAll("ops") List<Op> inside) {
        ClusterSpec spec = PropertyPools.spec(cluster);
        ClusterState c = new ClusterState(spec);
        List<GpuGrant> held = new ArrayList<>();
        for (Op op : before) {
            if (op instanceof Apply a) {
                GpuGrant g = fitting(c, a);
                if (g != null) { c.apply(List.of(g)); held.add(g); }
            } else if (op instanceof Release r && !held.isEmpty()) {
                c.release(List.of(held.remove(r.pick() % held.size())));
            }
        }
        List<List<Integer>> order = PropertyPools.indexOrder(c);
        int mark = c.checkpoint();
        for (Op op : inside) {
            if (op instanceof Apply a) {
                GpuGrant g = fitting(c, a);
                if (g != null) { c.apply(List.of(g)); held.add(g); }
            } else if (op instanceof Release r && !held.isEmpty()) {
                c.release(List.of(held.remove(r.pick() % held.size())));
            }
        }
        c.rollback(mark);
        assertThat(PropertyPools.indexOrder(c)).as("index visiting order after a rolled-back what-if").isEqualTo(order);
    }

    /** The grant the op describes, made to fit the GPU's free capacity, or null when nothing fits. */
    static GpuGrant fitting(ClusterState c, Apply a) {
        NodeState n = c.node(a.node() % c.nodeCount());
        int g = a.gpu() % n.gpuCount();
        if (a.exclusive()) return n.isFullyFree(g) ? new GpuGrant(n.id(), g, 1000, n.memoryCapacityMib(), true) : null;
        if (!n.canShare(g) || n.freeMemoryMib(g) <= 0) return null;
        int milli = Math.min(a.milli(), n.freeMilli(g));
        long mem = Math.min(Math.max(1, a.memMib()), n.freeMemoryMib(g));
        return new GpuGrant(n.id(), g, milli, mem, false);
    }

    /** Ground truth, from the GPUs themselves: the most idle, healthy GPUs in one NVLink domain of the node. */
    static int idleInBestDomain(NodeState n) {
        int best = 0;
        for (List<Integer> d : n.spec().nvlinkDomains()) {
            int idle = 0;
            for (int g : d) if (n.isFullyFree(g)) idle++;
            best = Math.max(best, idle);
        }
        return best;
    }

    /** Same state and same index answers as a fresh ClusterState with the same flags and grants; index is sound and complete. */
    static void assertMatchesFresh(ClusterSpec spec, ClusterState c, List<GpuGrant> held, List<HeldHost> hosts) {
        ClusterState fresh = new ClusterState(spec);
        for (HeldHost h : hosts) fresh.takeHost(h.node(), h.host());
        // grants first: a GPU that went unhealthy (or a node cordoned) keeps the work it had
        for (NodeState n : c.nodes()) for (int g = 0; g < n.gpuCount(); g++) fresh.setHealthy(n.id(), g, true);
        fresh.apply(held);
        for (NodeState n : c.nodes()) {
            fresh.setCordoned(n.id(), n.cordoned());
            for (int g = 0; g < n.gpuCount(); g++) fresh.setHealthy(n.id(), g, n.healthy(g));
        }
        assertThat(PropertyPools.snapshot(c)).as("state equals a fresh state with the same grants").isEqualTo(PropertyPools.snapshot(fresh));
        assertThat(PropertyPools.indexCanonical(c)).as("index equals a fresh state's index").isEqualTo(PropertyPools.indexCanonical(fresh));
        // ground truth: exactly the uncordoned nodes of the models with the capacity are visited
        List<Collection<String>> modelSets = new ArrayList<>();
        modelSets.add(c.modelIds());
        for (String m : c.modelIds()) modelSets.add(List.of(m));
        for (Collection<String> ms : modelSets) {
            for (int[] q : PropertyPools.INDEX_QUERIES) {
                Set<Integer> seen = new HashSet<>();
                PropertyPools.visit(c, ms, q, true, id -> { assertThat(seen.add(id)).as("node visited twice").isTrue(); return true; });
                for (NodeState n : c.nodes()) {
                    boolean eligible = !n.cordoned() && ms.contains(n.model().id());
                    boolean mustVisit = eligible && (q[1] > 0 ? n.maxShareableMilli() >= q[1]
                            : q[2] == 1 ? idleInBestDomain(n) >= q[0] : n.fullyFreeGpus() >= q[0]);
                    boolean mayVisit = eligible && (q[1] > 0 ? n.maxShareableMilli() >= 0 && n.maxShareableMilli() / 50 >= q[1] / 50 : mustVisit);
                    String what = n.name() + " for " + q[0] + " GPUs / share " + q[1] + (q[2] == 1 ? " in one NVLink domain" : "") + " models " + ms;
                    if (mustVisit) assertThat(seen).as("index misses %s", what).contains(n.id());
                    if (!mayVisit) assertThat(seen).as("index proposes %s", what).doesNotContain(n.id());
                }
            }
        }
    }
}
