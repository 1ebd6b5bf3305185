package io.gpupool.engine.property;

import io.gpupool.engine.JobState;
import io.gpupool.engine.placement.CycleState;
import io.gpupool.engine.placement.PlacementResult;
import io.gpupool.engine.policy.PolicyRegistry;
import io.gpupool.engine.state.ClusterState;
import io.gpupool.engine.state.GpuGrant;
import io.gpupool.model.JobSpec;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Gangs are all-or-nothing. After any round no job runs with fewer grants than it asked for; a placement
 * that fails leaves the capacity state exactly as it was, and so does every dry run.
 */
class GangAtomicityPropertyTest {

    /** A placement attempt: the job, whether to bind, and how many reserved (excluded) GPUs to pass. */
    record Probe(SchedulerOps.JobGen job, boolean bind, int excludeEvery) {}

    @Provide
    Arbitrary<String> policies() {
        return Arbitraries.of(PolicyRegistry.names());
    }

    @Provide
    Arbitrary<String> placements() {
        return Arbitraries.of(SchedulerOps.PLACEMENTS);
    }

    @Provide
    Arbitrary<List<PropertyPools.NodeGen>> clusters() {
        return PropertyPools.clusters(8, true);
    }

    @Provide
    Arbitrary<List<SchedulerOps.Op>> opStreams() {
        return SchedulerOps.ops(true).list().ofMinSize(5).ofMaxSize(50);
    }

    @Provide
    Arbitrary<List<Probe>> probes() {
        return net.jqwik.api.Combinators.combine(SchedulerOps.jobs(), Arbitraries.of(true, false), Arbitraries.integers().between(0, 4))
                .as(Probe::new).list().ofMinSize(1).ofMaxSize(12);
    }

    @Property(tries = 250, shrinking = ShrinkingMode.BOUNDED)
    void failedPlacementsAndDryRunsLeaveTheCapacityStateUntouched(
            @ForAll("policies") String policy,
            @ForAll("placements") String placement,
            @ForAll("clusters") List<PropertyPools.NodeGen> cluster,
            @ForAll("opStreams") List<SchedulerOps.Op> ops,
            @ForAll("probes") List<Probe> probes) {
        SchedulerOps.Run run = new SchedulerOps.Run(PropertyPools.spec(cluster), SchedulerOps.Run.config(policy, placement), cluster);
        for (SchedulerOps.Op op : ops) {
            run.apply(op);
            SchedulerOps.checkInvariants(run.s);
        }
        ClusterState c = run.s.cluster();
        int k = 0;
        for (Probe p : probes) {
            JobSpec spec = p.job().spec("probe" + k++, run.now);
            Set<Long> excluded = null;
            if (p.excludeEvery() > 0) {
                excluded = new HashSet<>();
                int i = 0;
                for (var n : c.nodes()) for (int g = 0; g < n.gpuCount(); g++) if (i++ % (p.excludeEvery() + 1) == 0) excluded.add(CycleState.gpuKey(n.id(), g));
            }
            String before = PropertyPools.snapshot(c);
            List<String> indexBefore = PropertyPools.indexCanonical(c);
            PlacementResult r = run.s.pipeline().place(new CycleState(c, spec, run.s.workloadProfile(), excluded), p.bind());
            if (r.ok() && p.bind()) {
                List<GpuGrant> grants = r.allocation().grants();
                assertThat(grants).as("a bound placement of %s is whole", spec.shape()).hasSize(spec.totalGpus());
                assertThat(r.allocation().replicas()).hasSize(spec.shape().replicas());
                for (GpuGrant g : grants) {
                    if (excluded != null) assertThat(excluded).as("placement used a reserved GPU").doesNotContain(CycleState.gpuKey(g.node(), g.gpu()));
                }
                assertThat(PropertyPools.snapshot(c)).as("a bound placement changes the state").isNotEqualTo(before);
                c.release(r.allocation());
            }
            assertThat(PropertyPools.snapshot(c)).as("%s of %s (%s) changed the capacity state",
                    r.ok() ? "dry run" : "failed placement", spec.id(), spec.shape()).isEqualTo(before);
            assertThat(PropertyPools.indexCanonical(c)).as("capacity index after %s", r.ok() ? "dry run" : "failed placement").isEqualTo(indexBefore);
            run.s.checkConsistency();
        }
        // the state is still what the scheduler believes, and scheduling on it stays safe
        run.round();
        SchedulerOps.checkInvariants(run.s);
        for (JobState j : run.s.runningJobs()) assertThat(j.allocation().grants()).hasSize(j.spec().totalGpus());
    }

    /**
     * A dry run is free of side effects a user could notice: after {@code place(cycle, false)} the next real
     * placement gives the same GPUs as on an identical pool where no dry run happened.
     */
    @Property(tries = 200, shrinking = ShrinkingMode.BOUNDED)
    void aDryRunDoesNotChangeWhereTheNextJobGoes(
            @ForAll("placements") String placement,
            @ForAll("clusters") List<PropertyPools.NodeGen> cluster,
            @ForAll("opStreams") List<SchedulerOps.Op> ops,
            @ForAll("probes") List<Probe> probes) {
        SchedulerOps.Run a = new SchedulerOps.Run(PropertyPools.spec(cluster), SchedulerOps.Run.config("fcfs", placement), cluster);
        SchedulerOps.Run b = new SchedulerOps.Run(PropertyPools.spec(cluster), SchedulerOps.Run.config("fcfs", placement), cluster);
        for (SchedulerOps.Op op : ops) { a.apply(op); b.apply(op); }
        assertThat(PropertyPools.snapshot(b.s.cluster())).isEqualTo(PropertyPools.snapshot(a.s.cluster()));
        int k = 0;
        for (Probe p : probes) {
            JobSpec spec = p.job().spec("probe" + k++, a.now);
            b.s.pipeline().place(new CycleState(b.s.cluster(), spec, b.s.workloadProfile(), null), false);
        }
        JobSpec next = probes.getLast().job().spec("next", a.now);
        PlacementResult ra = a.s.pipeline().place(new CycleState(a.s.cluster(), next, a.s.workloadProfile(), null), false);
        PlacementResult rb = b.s.pipeline().place(new CycleState(b.s.cluster(), next, b.s.workloadProfile(), null), false);
        assertThat(rb.ok()).isEqualTo(ra.ok());
        if (ra.ok()) {
            assertThat(rb.allocation().grants()).as("placement of %s after dry runs of %s", next.shape(), probes.size())
                    .isEqualTo(ra.allocation().grants());
        }
    }
}
