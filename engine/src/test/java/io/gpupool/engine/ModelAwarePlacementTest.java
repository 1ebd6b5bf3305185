package io.gpupool.engine;

import io.gpupool.engine.placement.PlacementConfig;
import io.gpupool.engine.placement.ReplicaDemand;
import io.gpupool.engine.placement.WorkloadProfile;
import io.gpupool.engine.placement.plugins.Fragmentation;
import io.gpupool.engine.state.ClusterState;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.GpuShare;
import io.gpupool.model.JobSpec;
import io.gpupool.model.NodeSpec;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;

import static io.gpupool.engine.TestPools.A100;
import static io.gpupool.engine.TestPools.T4;
import static io.gpupool.engine.TestPools.job;
import static io.gpupool.engine.TestPools.node;
import static org.assertj.core.api.Assertions.assertThat;

/** GPU-model constraints in placement: FGD's task mix carries them (as in Weng et al.), and model order is the pool's. */
class ModelAwarePlacementTest {

    /** One 2-GPU node per model, in the given order. */
    private static ClusterSpec pool(boolean t4First) {
        NodeSpec t4 = node("t4-0", T4, 2, List.of(), 1.0, 10);
        NodeSpec a100 = node("a100-0", A100, 2, List.of(List.of(0, 1)), 1.0, 10);
        return new ClusterSpec(t4First ? List.of(t4, a100) : List.of(a100, t4));
    }

    private static String placedOn(Scheduler s, JobSpec j) {
        assertThat(s.submit(j, 0).accepted()).isTrue();
        s.schedule(0);
        return s.cluster().node(s.job(j.id()).allocation().grants().getFirst().node()).name();
    }

    @Test
    void fgdLeavesTheModelThatConstrainedTasksNeed() {
        for (boolean t4First : List.of(true, false)) {
            Scheduler fgd = new Scheduler(pool(t4First), SchedulerConfig.defaults("fcfs").withPlacement(PlacementConfig.parse("fgd;limit=0")));
            // the expected workload: T4-only single GPUs
            for (int i = 0; i < 10; i++) fgd.workloadProfile().observe(job("t4-" + i, 1).allowedModels(Set.of("T4")).build());
            // an unconstrained GPU: on the T4 node it would strand a GPU the T4 tasks need; on the A100 it strands nothing they could use
            assertThat(placedOn(fgd, job("any", 1).build())).as("t4 first: %s", t4First).isEqualTo("a100-0");
        }
    }

    @Test
    void fragmentationCountsAllFreeCapacityForATaskThatMayNotRunOnTheModel() {
        ClusterState cluster = new ClusterState(pool(true));
        var t4Only = new WorkloadProfile.Shape(1, 1000, Set.of("T4"), 1.0);
        var any = new WorkloadProfile.Shape(1, 1000, Set.of(), 1.0);
        var a100 = cluster.node(cluster.nodeId("a100-0"));
        assertThat(Fragmentation.of(a100, List.of(t4Only), null, null)).isEqualTo(2000);
        assertThat(Fragmentation.of(a100, List.of(any), null, null)).isZero();
        // after a whole GPU goes there, one GPU is left, still all fragment for the T4-only task
        ReplicaDemand one = ReplicaDemand.of(job("x", 1).build());
        assertThat(Fragmentation.of(a100, List.of(t4Only), one, new int[] {0})).isEqualTo(1000);
        var t4 = cluster.node(cluster.nodeId("t4-0"));
        assertThat(Fragmentation.of(t4, List.of(t4Only), null, null)).isZero();
    }

    @Test
    void theWorkloadProfileKeepsModelConstraintsApart() {
        WorkloadProfile p = new WorkloadProfile();
        p.observe(job("a", 1).allowedModels(Set.of("T4")).build());
        p.observe(job("b", 1).allowedModels(Set.of("T4")).build());
        p.observe(job("c", 1).build());
        p.observe(job("d", 1).share(new GpuShare(500, 0)).build());
        assertThat(p.shapes()).extracting(WorkloadProfile.Shape::models, WorkloadProfile.Shape::milli, WorkloadProfile.Shape::weight)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple(Set.of("T4"), 1000, 0.5),
                        org.assertj.core.groups.Tuple.tuple(Set.of(), 1000, 0.25),
                        org.assertj.core.groups.Tuple.tuple(Set.of(), 500, 0.25));
        assertThat(p.shapes().getFirst().allows("A100-80GB")).isFalse();
        assertThat(p.shapes().get(1).allows("A100-80GB")).isTrue();
    }

    @Test
    void allowedModelsAreVisitedInThePoolsOrderNotTheSetsOrder() {
        // binpack scores both idle nodes alike; the first candidate wins, and "first" must not depend on the
        // iteration order of the job's Set (it differs between JVM runs), only on the pool
        JobSpec either = job("either", 1).allowedModels(Set.of("T4", "A100-80GB")).build();
        for (boolean t4First : List.of(true, false)) {
            Scheduler s = new Scheduler(pool(t4First), SchedulerConfig.defaults("fcfs").withPlacement(PlacementConfig.parse("binpack")));
            assertThat(placedOn(s, either)).isEqualTo(t4First ? "t4-0" : "a100-0");
        }
    }

    @Test
    void forgetDropsOnlyFinishedJobs() {
        Scheduler s = new Scheduler(pool(true), SchedulerConfig.defaults("fcfs"));
        s.submit(job("j", 1).build(), 0);
        s.schedule(0);
        assertThat(s.forget("j")).isFalse();
        s.complete("j", 10);
        assertThat(s.forget("j")).isTrue();
        assertThat(s.job("j")).isNull();
        assertThat(s.forget("j")).isFalse();
        // the id may be used again
        assertThat(s.submit(job("j", 1).build(), 20).accepted()).isTrue();
    }
}
