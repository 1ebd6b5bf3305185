package io.gpupool.engine.property;

import io.gpupool.engine.JobState;
import io.gpupool.engine.JobStatus;
import io.gpupool.engine.policy.PolicyRegistry;
import io.gpupool.engine.state.NodeState;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Capacity safety: over random heterogeneous pools (models, oversubscription, split counts, NVLink domains,
 * unhealthy GPUs, cordoned nodes) and random streams of submit / schedule / complete / cancel / preempt /
 * cordon / health operations, under every policy and several placements, no GPU is ever given beyond its
 * sharing settings, every running gang is whole and sits where its constraints allow, and the state is
 * exactly the sum of the allocations.
 */
class CapacitySafetyPropertyTest {

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
        return PropertyPools.clusters(12, true);
    }

    @Provide
    Arbitrary<List<SchedulerOps.Op>> opStreams() {
        return SchedulerOps.ops(true).list().ofMinSize(15).ofMaxSize(80);
    }

    @Property(tries = 350, shrinking = ShrinkingMode.BOUNDED)
    void noGpuIsOverCommittedAndEveryRunningGangIsWholeAndWellPlaced(
            @ForAll("policies") String policy,
            @ForAll("placements") String placement,
            @ForAll("clusters") List<PropertyPools.NodeGen> cluster,
            @ForAll("opStreams") List<SchedulerOps.Op> ops) {
        SchedulerOps.Run run = new SchedulerOps.Run(PropertyPools.spec(cluster), SchedulerOps.Run.config(policy, placement), cluster);
        SchedulerOps.checkInvariants(run.s);
        for (SchedulerOps.Op op : ops) {
            run.apply(op);
            SchedulerOps.checkInvariants(run.s);
        }
        run.round();
        SchedulerOps.checkInvariants(run.s);
    }

    /**
     * Nothing accepted that cannot be honoured: once every node is uncordoned and healthy, draining the pool
     * (complete everything, schedule) starts every accepted job.
     */
    @Property(tries = 200, shrinking = ShrinkingMode.BOUNDED)
    void everyAcceptedJobRunsOnceThePoolIsHealthyAndDrained(
            @ForAll("policies") String policy,
            @ForAll("placements") String placement,
            @ForAll("clusters") List<PropertyPools.NodeGen> cluster,
            @ForAll("opStreams") List<SchedulerOps.Op> ops) {
        SchedulerOps.Run run = new SchedulerOps.Run(PropertyPools.spec(cluster), SchedulerOps.Run.config(policy, placement), cluster);
        for (SchedulerOps.Op op : ops) run.apply(op);
        for (NodeState n : run.s.cluster().nodes()) {
            run.s.setCordoned(n.name(), false);
            for (int g = 0; g < n.gpuCount(); g++) run.s.setGpuHealthy(n.name(), g, true);
        }
        int rounds = 0;
        while (!run.s.pendingJobs().isEmpty() && rounds++ <= run.s.allJobs().size() + 1) {
            run.now += 1000;
            for (JobState j : new ArrayList<>(run.s.runningJobs())) run.s.complete(j.id(), run.now);
            run.round();
            SchedulerOps.checkInvariants(run.s);
        }
        assertThat(run.s.pendingJobs()).as("accepted jobs still pending on an empty, healthy pool: %s",
                run.s.pendingJobs().stream().map(j -> j.id() + " " + j.spec().shape() + " milli=" + j.spec().share().milli()
                        + " mem=" + j.spec().share().memoryMib() + " nvlink=" + j.spec().requireNvlink() + " models=" + j.spec().allowedModels()
                        + ": " + j.waitReason()).toList()).isEmpty();
        for (JobState j : run.s.allJobs()) assertThat(j.status()).isNotEqualTo(JobStatus.PENDING);
    }
}
