package io.gpupool.engine.property;

import io.gpupool.engine.JobState;
import io.gpupool.engine.JobStatus;
import io.gpupool.engine.placement.CycleState;
import io.gpupool.engine.placement.PlacementConfig;
import io.gpupool.engine.placement.PlacementPipeline;
import io.gpupool.engine.policy.PolicyRegistry;
import io.gpupool.engine.state.ClusterState;
import io.gpupool.engine.state.NodeState;
import io.gpupool.model.ClusterSpec;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.statistics.Statistics;

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

    /**
     * And nothing rejected that could run: a job rejected at submit (as one that can never fit) finds no
     * place on the same pool empty, healthy and uncordoned, however many nodes the pipeline looks at.
     */
    @Property(tries = 200, shrinking = ShrinkingMode.BOUNDED)
    void everyRejectedJobFailsToPlaceOnTheEmptyPool(
            @ForAll("clusters") List<PropertyPools.NodeGen> cluster,
            @ForAll("opStreams") List<SchedulerOps.Op> ops) {
        ClusterSpec spec = PropertyPools.spec(cluster);
        SchedulerOps.Run run = new SchedulerOps.Run(spec, SchedulerOps.Run.config("fcfs", "binpack"), cluster);
        for (SchedulerOps.Op op : ops) run.apply(op);
        PlacementPipeline everyNode = new PlacementPipeline(PlacementConfig.parse("binpack;limit=0"));
        long rejected = run.s.allJobs().stream().filter(j -> j.status() == JobStatus.REJECTED).count();
        Statistics.collect(rejected > 0 ? "some job rejected" : "none rejected");
        Statistics.coverage(c -> c.check("some job rejected").percentage(p -> p >= 20));
        for (JobState j : run.s.allJobs()) {
            if (j.status() != JobStatus.REJECTED) continue;
            ClusterState empty = new ClusterState(spec);
            for (NodeState n : empty.nodes()) for (int g = 0; g < n.gpuCount(); g++) empty.setHealthy(n.id(), g, true);
            assertThat(everyNode.place(new CycleState(empty, j.spec(), null, null), false).ok())
                    .as("job %s was rejected (%s) but fits the empty pool", j.id(), j.waitReason()).isFalse();
        }
    }
}
