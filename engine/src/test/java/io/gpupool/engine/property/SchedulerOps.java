package io.gpupool.engine.property;

import io.gpupool.engine.JobState;
import io.gpupool.engine.JobStatus;
import io.gpupool.engine.RoundResult;
import io.gpupool.engine.Scheduler;
import io.gpupool.engine.SchedulerConfig;
import io.gpupool.engine.TenantLedger;
import io.gpupool.engine.placement.PlacementConfig;
import io.gpupool.engine.state.GpuGrant;
import io.gpupool.engine.state.NodeState;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.GpuShare;
import io.gpupool.model.HostResources;
import io.gpupool.model.JobSpec;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** Random job specs and operation streams against a Scheduler, and the invariants checked after every step. */
final class SchedulerOps {
    private SchedulerOps() {}

    static final List<String> PLACEMENTS = List.of("binpack,topology", "spread", "fgd", "best-fit", "fgd,topology",
            "binpack;limit=1", "spread;gpu=binpack;limit=0", "best-fit:2,spread:1;gpu=fgd");

    /**
     * A generated job. kind 0 = whole GPUs, 1 = fractional share, 2 = gang of replicas, 3 = CPU-only (replicas of no
     * GPU, host only; a job that asks for no host then asks for one core); host per replica (often none).
     */
    record JobGen(int kind, int replicas, int perReplica, int milli, long memMib, int allowedMask, boolean nvlink,
                  int priority, int tenant, boolean preemptible, int durationSec, boolean estimate, HostResources host) {
        JobSpec spec(String id, long nowMs) {
            JobSpec.Builder b = JobSpec.builder(id).submitMs(nowMs).tenant("t" + tenant).priority(priority).preemptible(preemptible)
                    .requireNvlink(nvlink && kind != 3).host(host);
            switch (kind) {
                case 1 -> b.shape(1, 1).share(new GpuShare(milli, memMib));
                case 2 -> b.shape(replicas, perReplica);
                case 3 -> b.shape(replicas, 0).host(host.requested() ? host : new HostResources(1000, 0));
                default -> b.shape(1, perReplica);
            }
            Set<String> allowed = new LinkedHashSet<>();
            for (int i = 0; i < PropertyPools.MODELS.size(); i++) if ((allowedMask & (1 << i)) != 0) allowed.add(PropertyPools.MODELS.get(i).id());
            if ((allowedMask & (1 << PropertyPools.MODELS.size())) != 0) allowed.add(PropertyPools.ABSENT_MODEL);
            b.allowedModels(allowed);
            if (estimate) b.estimateSec(durationSec);
            return b.build();
        }
    }

    static Arbitrary<JobGen> jobs() {
        Arbitrary<Integer> kind = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(6, Arbitraries.integers().between(0, 2)),
                net.jqwik.api.Tuple.of(1, Arbitraries.just(3)));
        Arbitrary<Integer> replicas = Arbitraries.integers().between(1, 3);
        Arbitrary<Integer> perReplica = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(4, Arbitraries.integers().between(1, 2)),
                net.jqwik.api.Tuple.of(2, Arbitraries.integers().between(3, 8)));
        Arbitrary<Integer> milli = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(3, Arbitraries.of(100, 250, 300, 500, 750, 1000)),
                net.jqwik.api.Tuple.of(1, Arbitraries.integers().between(1, 1000)));
        Arbitrary<Long> mem = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(3, Arbitraries.just(0L)),
                net.jqwik.api.Tuple.of(2, Arbitraries.longs().between(1, 40_000)));
        Arbitrary<Integer> allowed = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(3, Arbitraries.just(0)),
                net.jqwik.api.Tuple.of(2, Arbitraries.integers().between(1, 31)));
        Arbitrary<Boolean> nvlink = Arbitraries.integers().between(0, 3).map(x -> x == 0);
        Arbitrary<Integer> priority = Arbitraries.integers().between(0, 10);
        Arbitrary<Integer> tenant = Arbitraries.integers().between(0, 2);
        Arbitrary<Boolean> preemptible = Arbitraries.integers().between(0, 4).map(x -> x != 0);
        Arbitrary<Integer> duration = Arbitraries.integers().between(1, 20_000);
        Arbitrary<Boolean> estimate = Arbitraries.of(true, false);
        // host requests on the scale of the generated nodes' hosts (PropertyPools.HOSTS): some fit only the roomy ones
        Arbitrary<HostResources> host = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(3, Arbitraries.just(HostResources.NONE)),
                net.jqwik.api.Tuple.of(2, Combinators.combine(Arbitraries.longs().between(0, 20_000), Arbitraries.longs().between(0, 100_000))
                        .as(HostResources::new)));
        // Combinators take at most 8: combine in two steps
        Arbitrary<int[]> shape = Combinators.combine(kind, replicas, perReplica, milli).as((k, r, p, m) -> new int[] {k, r, p, m});
        return Combinators.combine(shape, mem, allowed, nvlink, priority, tenant, preemptible,
                        Combinators.combine(duration, estimate, host).as((d, e, h) -> new Object[] {d, e, h}))
                .as((s, m, a, n, p, t, pre, de) -> new JobGen(s[0], s[1], s[2], s[3], m, a, n, p, t, pre, (Integer) de[0], (Boolean) de[1],
                        (HostResources) de[2]));
    }

    /** One operation of a random stream. */
    sealed interface Op permits Submit, Schedule, Complete, Cancel, Preempt, Cordon, Health {}

    record Submit(JobGen job) implements Op {}

    record Schedule(int advanceSec) implements Op {}

    record Complete(int pick) implements Op {}

    record Cancel(int pick, boolean running) implements Op {}

    record Preempt(int pick) implements Op {}

    record Cordon(int node, boolean cordoned) implements Op {}

    record Health(int node, int gpu, boolean healthy) implements Op {}

    static Arbitrary<Op> ops(boolean withFaults) {
        Arbitrary<Integer> pick = Arbitraries.integers().between(0, 1000);
        List<net.jqwik.api.Tuple.Tuple2<Integer, Arbitrary<? extends Op>>> choices = new ArrayList<>(List.of(
                net.jqwik.api.Tuple.of(10, jobs().map(Submit::new)),
                net.jqwik.api.Tuple.of(7, Arbitraries.integers().between(0, 7200).map(Schedule::new)),
                net.jqwik.api.Tuple.of(4, pick.map(Complete::new)),
                net.jqwik.api.Tuple.of(1, Combinators.combine(pick, Arbitraries.of(true, false)).as(Cancel::new)),
                net.jqwik.api.Tuple.of(1, pick.map(Preempt::new))));
        if (withFaults) {
            choices.add(net.jqwik.api.Tuple.of(1, Combinators.combine(pick, Arbitraries.of(true, false)).as(Cordon::new)));
            choices.add(net.jqwik.api.Tuple.of(1, Combinators.combine(pick, Arbitraries.integers().between(0, 7), Arbitraries.of(true, false)).as(Health::new)));
        }
        @SuppressWarnings({"unchecked", "rawtypes"})
        Arbitrary<Op> op = (Arbitrary<Op>) (Arbitrary) Arbitraries.frequencyOf(choices.toArray(new net.jqwik.api.Tuple.Tuple2[0]));
        return op;
    }

    // ---- driving a scheduler ---------------------------------------------------------------------

    /** A scheduler plus the test's own records of what was submitted and what the pool looked like. */
    static final class Run {
        final Scheduler s;
        final Map<String, Long> durationsMs = new HashMap<>();
        long now;
        int nextId;

        Run(ClusterSpec spec, SchedulerConfig config, List<PropertyPools.NodeGen> gens) {
            this.s = new Scheduler(spec, config, id -> durationsMs.getOrDefault(id, 3_600_000L));
            for (int i = 0; i < gens.size(); i++) if (gens.get(i).cordoned()) s.setCordoned("n" + i, true);
        }

        static SchedulerConfig config(String policy, String placement) {
            return SchedulerConfig.defaults(policy).withPlacement(PlacementConfig.parse(placement));
        }

        /** Applies one operation; returns the round's result for a Schedule, else null. */
        RoundResult apply(Op op) {
            switch (op) {
                case Submit sub -> {
                    String id = "j" + nextId++;
                    durationsMs.put(id, sub.job().durationSec() * 1000L);
                    s.submit(sub.job().spec(id, now), now);
                }
                case Schedule sch -> {
                    now += sch.advanceSec() * 1000L;
                    return round();
                }
                case Complete c -> {
                    List<JobState> r = new ArrayList<>(s.runningJobs());
                    if (!r.isEmpty()) s.complete(r.get(c.pick() % r.size()).id(), now);
                }
                case Cancel c -> {
                    List<JobState> r = new ArrayList<>(c.running() ? s.runningJobs() : s.pendingJobs());
                    if (!r.isEmpty()) assertThat(s.cancel(r.get(c.pick() % r.size()).id(), now)).isTrue();
                }
                case Preempt p -> {
                    List<JobState> r = new ArrayList<>(s.runningJobs());
                    if (!r.isEmpty()) s.preempt(r.get(p.pick() % r.size()).id(), now);
                }
                case Cordon c -> s.setCordoned(s.cluster().node(c.node() % s.cluster().nodeCount()).name(), c.cordoned());
                case Health h -> {
                    NodeState n = s.cluster().node(h.node() % s.cluster().nodeCount());
                    s.setGpuHealthy(n.name(), h.gpu() % n.gpuCount(), h.healthy());
                }
            }
            return null;
        }

        /** A round, checking that every job it started went only to GPUs that were healthy on uncordoned nodes. */
        RoundResult round() {
            Set<Long> usable = new HashSet<>();
            for (NodeState n : s.cluster().nodes()) {
                if (n.cordoned()) continue;
                for (int g = 0; g < n.gpuCount(); g++) if (n.healthy(g)) usable.add(key(n.id(), g));
            }
            RoundResult r = s.schedule(now);
            for (String id : r.started()) {
                JobState j = s.job(id);
                if (j.status() != JobStatus.RUNNING || j.runStartMs() != now) continue;
                for (GpuGrant g : j.allocation().grants()) {
                    assertThat(usable).as("job %s got GPU %s/%d, which was unhealthy or on a cordoned node when it started",
                            id, s.cluster().node(g.node()).name(), g.gpu()).contains(key(g.node(), g.gpu()));
                }
            }
            return r;
        }
    }

    static long key(int node, int gpu) {
        return ((long) node << 8) | gpu;
    }

    /** Every invariant a user relies on, checked from the outside against the scheduler's own view. */
    static void checkInvariants(Scheduler s) {
        s.checkConsistency();
        Map<Long, long[]> use = new HashMap<>();
        Map<String, Double> heldByTenant = new HashMap<>();
        Map<Integer, long[]> hostUse = new HashMap<>();
        for (JobState j : s.runningJobs()) {
            assertThat(j.status()).isEqualTo(JobStatus.RUNNING);
            JobSpec spec = j.spec();
            var a = j.allocation();
            assertThat(a).as("running job %s has an allocation", j.id()).isNotNull();
            assertThat(a.grants()).as("job %s (%s) holds replicas x gpusPerReplica grants", j.id(), spec.shape()).hasSize(spec.totalGpus());
            assertThat(a.replicas()).as("job %s replicas", j.id()).hasSize(spec.shape().replicas());
            Set<Long> gpusOfJob = new HashSet<>();
            for (int r = 0; r < a.replicas().size(); r++) {
                List<GpuGrant> rep = a.replicas().get(r);
                assertThat(rep).hasSize(spec.shape().gpusPerReplica());
                int node = a.nodeOf(r);
                assertThat(spec.allows(s.cluster().node(node).model())).as("job %s on an allowed model", j.id()).isTrue();
                NodeState n = s.cluster().node(node);
                Set<Integer> domains = new HashSet<>();
                for (GpuGrant g : rep) {
                    assertThat(g.node()).as("replica of %s on one node", j.id()).isEqualTo(node);
                    assertThat(gpusOfJob.add(key(g.node(), g.gpu()))).as("job %s holds GPU %s/%d twice", j.id(), n.name(), g.gpu()).isTrue();
                    assertThat(spec.allows(n.model())).as("job %s allowed %s, got %s", j.id(), spec.allowedModels(), n.model().id()).isTrue();
                    domains.add(n.domainOf(g.gpu()));
                    if (spec.share().isWhole()) {
                        assertThat(g.exclusive()).isTrue();
                        assertThat(g.milli()).isEqualTo(1000);
                    } else {
                        assertThat(g.exclusive()).isFalse();
                        assertThat(g.milli()).isEqualTo(spec.share().milli());
                        long expectMem = spec.share().memoryMib() > 0 ? spec.share().memoryMib()
                                : (long) Math.ceil(n.model().memoryMib() * (spec.share().milli() / 1000.0));
                        assertThat(g.memoryMib()).isEqualTo(expectMem);
                    }
                    long[] u = use.computeIfAbsent(key(g.node(), g.gpu()), k -> new long[3]);
                    u[0] += g.milli();
                    u[1] += g.memoryMib();
                    u[2]++;
                }
                if (spec.requireNvlink() && spec.shape().gpusPerReplica() > 1) {
                    assertThat(domains).as("NVLink replica of %s inside one NVLink domain", j.id()).hasSize(1);
                    assertThat(domains.iterator().next()).as("NVLink replica of %s on NVLink GPUs", j.id()).isGreaterThanOrEqualTo(0);
                }
            }
            heldByTenant.merge(spec.tenant(), j.gpuUnits(), Double::sum);
            assertThat(a.hostPerReplica()).as("job %s holds the host resources it asked for", j.id()).isEqualTo(spec.host());
            for (int r = 0; r < a.replicas().size(); r++) {
                long[] h = hostUse.computeIfAbsent(a.nodeOf(r), k -> new long[2]);
                h[0] += spec.host().cpuMilli();
                h[1] += spec.host().memoryMib();
            }
        }
        for (NodeState n : s.cluster().nodes()) {
            long[] h = hostUse.getOrDefault(n.id(), new long[2]);
            assertThat(h[0]).as("%s host CPU granted = capacity - free, within capacity", n.name())
                    .isEqualTo(n.spec().cpuMilli() - n.freeCpuMilli()).isLessThanOrEqualTo(n.spec().cpuMilli());
            assertThat(h[1]).as("%s host memory granted = capacity - free, within capacity", n.name())
                    .isEqualTo(n.spec().memoryMib() - n.freeHostMemoryMib()).isLessThanOrEqualTo(n.spec().memoryMib());
        }
        for (NodeState n : s.cluster().nodes()) {
            for (int g = 0; g < n.gpuCount(); g++) {
                long[] u = use.getOrDefault(key(n.id(), g), new long[3]);
                String where = n.name() + "/" + g;
                assertThat(u[0]).as("%s compute granted = 1000 - freeMilli", where).isEqualTo(1000 - n.freeMilli(g));
                assertThat(u[1]).as("%s memory granted = capacity - free", where).isEqualTo(n.memoryCapacityMib() - n.freeMemoryMib(g));
                assertThat(u[2]).as("%s tasks", where).isEqualTo(n.tasks(g));
                assertThat(u[0]).as("%s compute within 1000", where).isLessThanOrEqualTo(1000);
                assertThat(u[1]).as("%s memory within physical x oversubscription", where).isLessThanOrEqualTo(n.memoryCapacityMib());
                assertThat(u[2]).as("%s tasks within split count", where).isLessThanOrEqualTo(Math.max(1, n.spec().splitCount()));
            }
        }
        for (JobState j : s.pendingJobs()) {
            assertThat(j.status()).isEqualTo(JobStatus.PENDING);
            assertThat(j.allocation()).isNull();
        }
        for (JobState j : s.allJobs()) {
            if (j.status() == JobStatus.RUNNING) assertThat(s.runningJobs()).contains(j);
            if (j.status() == JobStatus.PENDING) assertThat(s.pendingJobs()).contains(j);
        }
        for (TenantLedger.Account acc : s.ledger().accounts()) {
            assertThat(acc.gpus()).as("tenant %s holds what its running jobs hold", acc.config().name())
                    .isCloseTo(heldByTenant.getOrDefault(acc.config().name(), 0.0), org.assertj.core.data.Offset.offset(1e-6));
        }
    }
}
