package io.gpupool.engine;

import io.gpupool.engine.status.Status;
import io.gpupool.engine.status.Resource;
import io.gpupool.engine.status.Code;
import io.gpupool.engine.placement.CycleState;
import io.gpupool.engine.placement.FilterPlugin;
import io.gpupool.engine.placement.PlacementResult;
import io.gpupool.engine.state.Allocation;
import io.gpupool.engine.state.GpuGrant;
import io.gpupool.engine.state.NodeState;
import io.gpupool.model.GpuShare;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static io.gpupool.engine.RefusalAssert.assertRefusal;
import static io.gpupool.engine.TestPools.A100;
import static io.gpupool.engine.TestPools.job;
import static io.gpupool.engine.TestPools.pool;
import static org.assertj.core.api.Assertions.assertThat;

/** The calls a driver that does not own the choice of node (Kubernetes) makes: startOn, restoreRunning, filters. */
class DriverApiTest {

    private static Scheduler scheduler() {
        return new Scheduler(pool(3, 8, A100), SchedulerConfig.defaults("fcfs"));
    }

    @Test
    void startOnPlacesOnTheGivenNodeOnlyAndKeepsTheJobPendingWhenItDoesNotFit() {
        Scheduler s = scheduler();
        s.submit(job("a", 8).build(), 0);
        PlacementResult r = s.startOn("a", "a100-80gb-2", 0);
        assertThat(r.ok()).isTrue();
        assertThat(s.job("a").status()).isEqualTo(JobStatus.RUNNING);
        assertThat(r.allocation().grants()).allMatch(g -> g.node() == 2);
        s.submit(job("b", 1).build(), 1);
        PlacementResult full = s.startOn("b", "a100-80gb-2", 1);
        assertThat(full.ok()).isFalse();
        assertRefusal(full.status(), Code.UNSCHEDULABLE, "capacity", Resource.GPUS, 1, 0, 8);
        assertThat(full.reason()).as("names the node").contains("a100-80gb-2");
        assertThat(s.job("b").status()).isEqualTo(JobStatus.PENDING);
        s.checkConsistency();
    }

    @Test
    void startOnHonoursTheTenantLimit() {
        Scheduler s = new Scheduler(pool(2, 8, A100), SchedulerConfig.defaults("fcfs")
                .withTenants(Map.of("t", new TenantConfig("t", 1, 0, 2))));
        s.submit(job("a", 2).tenant("t").build(), 0);
        assertThat(s.startOn("a", "a100-80gb-0", 0).ok()).isTrue();
        s.submit(job("b", 1).tenant("t").build(), 0);
        // 1 GPU asked, the tenant holds 2 of its 2: none left under its limit (in thousandths of a GPU)
        assertRefusal(s.startOn("b", "a100-80gb-1", 0).status(), Code.UNSCHEDULABLE, Status.QUOTA, Resource.GPU_COMPUTE, 1000, 0, 2000);
    }

    @Test
    void restoreRunningRefusesAGpuThatIsAlreadyHeldAndChangesNothing() {
        Scheduler s = scheduler();
        Allocation a = new Allocation("a", List.of(List.of(new GpuGrant(0, 3, 1000, 81920, true))));
        assertThat(s.restoreRunning(job("a", 1).build(), a, 0, 5).accepted()).isTrue();
        Allocation twice = new Allocation("b", List.of(List.of(new GpuGrant(0, 3, 500, 1000, false))));
        var rejected = s.restoreRunning(job("b", 1).milli(500).build(), twice, 0, 5);
        assertThat(rejected.accepted()).isFalse();
        assertRefusal(rejected.status(), Code.ERROR, Status.RESTORE, Resource.NONE);
        assertThat(s.job("b")).isNull();
        assertThat(s.cluster().node(0).tasks(3)).isEqualTo(1);
        // two fractional shares of one GPU fit together, a third beyond 1000 milli does not
        Allocation f1 = new Allocation("f1", List.of(List.of(new GpuGrant(1, 0, 600, 40960, false))));
        Allocation f2 = new Allocation("f2", List.of(List.of(new GpuGrant(1, 0, 400, 40960, false))));
        Allocation f3 = new Allocation("f3", List.of(List.of(new GpuGrant(1, 0, 100, 10, false))));
        assertThat(s.restoreRunning(job("f1", 1).share(new GpuShare(600, 40960)).build(), f1, 0, 5).accepted()).isTrue();
        assertThat(s.restoreRunning(job("f2", 1).share(new GpuShare(400, 40960)).build(), f2, 0, 5).accepted()).isTrue();
        assertThat(s.restoreRunning(job("f3", 1).share(new GpuShare(100, 10)).build(), f3, 0, 5).accepted()).isFalse();
        assertThat(s.job("a").status()).isEqualTo(JobStatus.RUNNING);
        s.checkConsistency();
        s.complete("a", 10);
        assertThat(s.forget("a")).isTrue();
        assertThat(s.job("a")).isNull();
        assertThat(s.forget("f1")).as("running jobs are kept").isFalse();
    }

    @Test
    void filterNodeAndScoreNodesAgreeWithPlacement() {
        Scheduler s = scheduler();
        s.submit(job("a", 4).build(), 0);
        s.startOn("a", "a100-80gb-1", 0);
        s.submit(job("b", 4).build(), 0);
        CycleState cycle = new CycleState(s.cluster(), s.job("b").spec(), s.workloadProfile(), null);
        List<NodeState> nodes = s.cluster().nodes();
        assertThat(nodes).allMatch(n -> s.pipeline().filterNode(cycle, n) == null);
        double[] scores = s.pipeline().scoreNodes(cycle, nodes);
        // binpack prefers the node that already runs a, which is where a round places b
        assertThat(scores[1]).isGreaterThan(scores[0]).isGreaterThan(scores[2] - 1e-9);
        s.schedule(1);
        assertThat(s.job("b").allocation().grants().getFirst().node()).isEqualTo(1);
        CycleState c8 = new CycleState(s.cluster(), job("c", 8).build(), s.workloadProfile(), null);
        assertRefusal(s.pipeline().filterNode(c8, nodes.get(1)), Code.UNSCHEDULABLE, "capacity", Resource.GPUS, 8, 0, 8);
    }

    /** Node 0 runs 4 of 8 GPUs, node 1 is idle, node 2 is full: a 2-GPU job fits on 0 and 1, binpack prefers 0. */
    @Test
    void filterAndScoreKeepsTheNodesThatFitAndScalesTheirScores() {
        Scheduler s = scheduler();
        s.submit(job("half", 4).build(), 0);
        s.startOn("half", "a100-80gb-0", 0);
        s.submit(job("full", 8).build(), 0);
        s.startOn("full", "a100-80gb-2", 0);
        long version = s.cluster().version();
        Map<String, Long> scores = s.filterAndScore(job("new", 2).build(), List.of("a100-80gb-2", "a100-80gb-1", "ghost", "a100-80gb-0"), 10);
        assertThat(scores).containsExactly(Map.entry("a100-80gb-1", 0L), Map.entry("a100-80gb-0", 10L));
        // two idle nodes score alike: both get the top score
        assertThat(new Scheduler(pool(2, 8, A100), SchedulerConfig.defaults("fcfs")).filterAndScore(job("new", 2).build(),
                List.of("a100-80gb-0", "a100-80gb-1"), 100)).containsExactly(Map.entry("a100-80gb-0", 100L), Map.entry("a100-80gb-1", 100L));
        assertThat(s.cluster().version()).isEqualTo(version);
    }

    @Test
    void wouldFitWithoutReleasesOnlyTheGivenRunningJobsAndLeavesTheStateAsItWas() {
        Scheduler s = scheduler();
        s.submit(job("full", 8).build(), 0);
        s.startOn("full", "a100-80gb-2", 0);
        s.submit(job("other", 8).build(), 0);
        s.startOn("other", "a100-80gb-1", 0);
        s.submit(job("queued", 8).build(), 0);
        var four = job("new", 4).build();
        assertThat(s.wouldFitWithout(four, "a100-80gb-2", List.of())).isFalse();
        assertThat(s.wouldFitWithout(four, "a100-80gb-2", List.of("other", "queued", "nobody"))).isFalse();
        assertThat(s.wouldFitWithout(four, "a100-80gb-2", List.of("full", "full"))).isTrue();
        assertThat(s.cluster().node(2).fullyFreeGpus()).isZero();
        assertThat(s.job("full").status()).isEqualTo(JobStatus.RUNNING);
        s.checkConsistency();
    }

    @Test
    void aDriverFilterVetoesNodesForRoundsAndStartOn() {
        Scheduler s = scheduler();
        s.addFilter(new FilterPlugin() {
            @Override public String name() { return "only-node-2"; }
            @Override public Status filter(CycleState c, io.gpupool.engine.placement.ReplicaDemand d, NodeState n) {
                return n.id() == 2 ? null : Status.unresolvable("only-node-2", Resource.NONE, "not node 2");
            }
        });
        s.submit(job("a", 1).build(), 0);
        s.schedule(0);
        assertThat(s.job("a").allocation().grants().getFirst().node()).isEqualTo(2);
        s.submit(job("b", 1).build(), 0);
        assertRefusal(s.startOn("b", "a100-80gb-0", 0).status(), Code.UNRESOLVABLE, "only-node-2", Resource.NONE);
        s.reconfigure(s.config().withPolicy("priority"));
        assertThat(s.startOn("b", "a100-80gb-1", 0).status().plugin()).as("kept across reconfigure").isEqualTo("only-node-2");
    }
}
