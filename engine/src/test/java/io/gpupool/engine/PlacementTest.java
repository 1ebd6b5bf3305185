package io.gpupool.engine;

import io.gpupool.engine.status.Status;
import io.gpupool.engine.status.Resource;
import io.gpupool.engine.status.Code;
import io.gpupool.engine.placement.PlacementConfig;
import io.gpupool.engine.state.GpuGrant;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.GpuShare;
import io.gpupool.model.JobSpec;
import io.gpupool.model.NodeSpec;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;

import static io.gpupool.engine.RefusalAssert.assertRefusal;
import static io.gpupool.engine.TestPools.A100;
import static io.gpupool.engine.TestPools.T4;
import static io.gpupool.engine.TestPools.job;
import static io.gpupool.engine.TestPools.node;
import static io.gpupool.engine.TestPools.pool;
import static org.assertj.core.api.Assertions.assertThat;

class PlacementTest {

    private static Scheduler scheduler(ClusterSpec spec, String placement) {
        return new Scheduler(spec, SchedulerConfig.defaults("fcfs").withPlacement(PlacementConfig.parse(placement)));
    }

    private static List<String> nodesOf(Scheduler s, String job) {
        return s.job(job).allocation().grants().stream().map(g -> s.cluster().node(g.node()).name()).distinct().toList();
    }

    private static void submitAndRun(Scheduler s, JobSpec j) {
        assertThat(s.submit(j, 0).accepted()).as("accepted %s", j.id()).isTrue();
        s.schedule(0);
    }

    @Test
    void binpackFillsTheBusiestNodeAndSpreadTheEmptiest() {
        for (String placement : List.of("binpack", "spread")) {
            Scheduler s = scheduler(pool(3, 8, A100), placement);
            submitAndRun(s, job("first", 4).build());
            submitAndRun(s, job("second", 2).build());
            if (placement.equals("binpack")) assertThat(nodesOf(s, "second")).isEqualTo(nodesOf(s, "first"));
            else assertThat(nodesOf(s, "second")).doesNotContainAnyElementsOf(nodesOf(s, "first"));
        }
    }

    @Test
    void nodePolicyAndGpuPolicyAreSeparateAsInHami() {
        // two T4 nodes of 2 GPUs: t4-0 has GPU0 700m busy, t4-1 has GPU0 200m busy; a 200m share is asked for.
        // The node policy picks the node (binpack: the busier t4-0; spread: t4-1), the GPU policy the GPU
        // inside it (binpack: the fuller GPU0 that still fits; spread: the idle GPU1), in all four combinations.
        Scheduler s = scheduler(pool(2, 2, T4), "spread");
        submitAndRun(s, job("busy700", 1).milli(700).build());
        submitAndRun(s, job("busy200", 1).milli(200).build());
        assertThat(s.job("busy700").allocation().grants().getFirst()).satisfies(g -> assertThat(g.node() * 10 + g.gpu()).isEqualTo(0));
        assertThat(s.job("busy200").allocation().grants().getFirst()).satisfies(g -> assertThat(g.node() * 10 + g.gpu()).isEqualTo(10));
        JobSpec share = job("share", 1).milli(200).build();
        java.util.Map<String, String> expected = java.util.Map.of(
                "binpack;gpu=binpack", "t4-0/0", "binpack;gpu=spread", "t4-0/1",
                "spread;gpu=binpack", "t4-1/0", "spread;gpu=spread", "t4-1/1");
        expected.forEach((placement, where) -> {
            s.reconfigure(s.config().withPlacement(PlacementConfig.parse(placement)));
            var r = s.pipeline().place(new io.gpupool.engine.placement.CycleState(s.cluster(), share, s.workloadProfile(), null), false);
            GpuGrant g = r.allocation().grants().getFirst();
            assertThat(s.cluster().node(g.node()).name() + "/" + g.gpu()).as(placement).isEqualTo(where);
        });
    }

    @Test
    void replicaStaysInsideOneNvlinkDomain() {
        // one node with two NVLink domains of 4 (DGX-1 style)
        NodeSpec n = node("dgx", A100, 8, List.of(List.of(0, 1, 2, 3), List.of(4, 5, 6, 7)), 1.0, 10);
        Scheduler s = scheduler(new ClusterSpec(List.of(n)), "binpack,topology");
        submitAndRun(s, job("a", 1).build());
        // 2 GPUs go to the domain that already has a job, keeping the other domain whole for a 4-GPU replica
        submitAndRun(s, job("b", 2).build());
        int domainOfA = s.job("a").allocation().grants().getFirst().gpu() / 4;
        assertThat(s.job("b").allocation().grants()).allMatch(g -> g.gpu() / 4 == domainOfA);
        submitAndRun(s, job("c", 4).requireNvlink(true).build());
        assertThat(s.job("c").allocation().grants()).allMatch(g -> g.gpu() / 4 != domainOfA);
        // 1 GPU left, in a's domain: a 2-GPU NVLink replica cannot be placed
        assertThat(s.submit(job("e", 2).requireNvlink(true).build(), 0).accepted()).isTrue();
        s.schedule(0);
        assertThat(s.job("e").status()).isEqualTo(JobStatus.PENDING);
        // no node has 2 idle GPUs inside one domain: the capacity index offers none
        assertRefusal(s.job("e").waitStatus(), Code.UNSCHEDULABLE, "capacity", Resource.NVLINK);
        assertThat(s.job("e").waitStatus().requested()).isEqualTo(2);
        s.checkConsistency();
    }

    @Test
    void gangIsAllOrNothingAndTheStateIsUntouchedOnFailure() {
        Scheduler s = scheduler(pool(2, 8, A100), "binpack");
        submitAndRun(s, job("small", 4).build());
        long usedBefore = s.cluster().usedMilli();
        submitAndRun(s, job("gang", 16).build()); // 2x8: only one node has 8 free GPUs
        assertThat(s.job("gang").status()).isEqualTo(JobStatus.PENDING);
        assertRefusal(s.job("gang").waitStatus(), Code.UNSCHEDULABLE, "capacity", Resource.GPUS);
        assertThat(s.job("gang").waitReason()).as("names the replica that found no node").contains("replica 2/2");
        assertThat(s.cluster().usedMilli()).isEqualTo(usedBefore);
        s.complete("small", 10);
        s.schedule(10);
        assertThat(s.job("gang").status()).isEqualTo(JobStatus.RUNNING);
        assertThat(s.job("gang").allocation().replicas()).hasSize(2);
        assertThat(nodesOf(s, "gang")).hasSize(2);
        s.checkConsistency();
    }

    @Test
    void fractionalSharesRespectComputeMemoryAndSplitCount() {
        // one T4 (15360 MiB), oversubscription 1.5 -> 23040 MiB for shares, at most 3 tasks
        NodeSpec n = node("t4", T4, 1, List.of(), 1.5, 3);
        Scheduler s = scheduler(new ClusterSpec(List.of(n)), "binpack");
        submitAndRun(s, job("a", 1).share(new GpuShare(300, 10_000)).build());
        submitAndRun(s, job("b", 1).share(new GpuShare(300, 10_000)).build());
        assertThat(s.job("b").status()).isEqualTo(JobStatus.RUNNING); // 20000 MiB <= 23040 thanks to oversubscription
        submitAndRun(s, job("c", 1).share(new GpuShare(300, 5_000)).build());
        assertThat(s.job("c").status()).as("memory 25000 > 23040").isEqualTo(JobStatus.PENDING);
        submitAndRun(s, job("d", 1).share(new GpuShare(300, 3_000)).build());
        assertThat(s.job("d").status()).as("strict FCFS: d waits behind c").isEqualTo(JobStatus.PENDING);
        s.cancel("c", 1);
        s.schedule(1);
        assertThat(s.job("d").status()).isEqualTo(JobStatus.RUNNING);
        s.submit(job("e", 1).share(new GpuShare(50, 100)).build(), 2);
        s.schedule(2);
        assertThat(s.job("e").status()).as("split count 3 reached").isEqualTo(JobStatus.PENDING);
        s.checkConsistency();
        assertThat(s.cluster().node(0).freeMilli(0)).isEqualTo(100);
        assertThat(s.cluster().node(0).freeMemoryMib(0)).isEqualTo(23040 - 23000);
    }

    @Test
    void wholeGpuIsNeverSharedWithAFraction() {
        Scheduler s = scheduler(pool(1, 1, A100), "binpack");
        submitAndRun(s, job("whole", 1).build());
        submitAndRun(s, job("share", 1).milli(100).build());
        assertThat(s.job("share").status()).isEqualTo(JobStatus.PENDING);
        s.checkConsistency();
    }

    @Test
    void fgdKeepsWholeGpusFreeForTheWorkloadThatNeedsThem() {
        // node a: GPU0 has 600m free (400m used), GPU1 idle; node b: both idle.
        // A 500m share: binpack at GPU level also picks the 600m GPU; FGD must not break an idle GPU either.
        Scheduler s = scheduler(pool(2, 2, T4), "fgd;limit=0");
        submitAndRun(s, job("seed", 1).milli(400).build());
        submitAndRun(s, job("whole", 1).build());
        submitAndRun(s, job("half", 1).milli(500).build());
        GpuGrant g = s.job("half").allocation().grants().getFirst();
        GpuGrant seed = s.job("seed").allocation().grants().getFirst();
        assertThat(g.node()).isEqualTo(seed.node());
        assertThat(g.gpu()).isEqualTo(seed.gpu());
        s.checkConsistency();
    }

    @Test
    void jobsThatCanNeverFitAreRejectedWithTheReason() {
        Scheduler s = scheduler(pool(4, 8, A100), "binpack");
        var big = s.submit(job("big", 16).shape(1, 16).build(), 0);
        assertThat(big.accepted()).isFalse();
        assertRefusal(big.status(), Code.UNRESOLVABLE, Status.FEASIBILITY, Resource.GPUS, 16, 8, 8);
        var model = s.submit(job("h100", 1).allowedModels(Set.of("H100-80GB")).build(), 0);
        assertRefusal(model.status(), Code.UNRESOLVABLE, Status.FEASIBILITY, Resource.GPU_MODEL);
        var gang = s.submit(job("huge", 40).build(), 0);
        // 5 replicas of 8 GPUs, one per node of the 4
        assertRefusal(gang.status(), Code.UNRESOLVABLE, Status.FEASIBILITY, Resource.NODES, 5, 4, 4);
        var mem = s.submit(job("mem", 1).share(new GpuShare(500, 100_000)).build(), 0);
        assertRefusal(mem.status(), Code.UNRESOLVABLE, Status.FEASIBILITY, Resource.GPU_MEMORY, 100_000, 81_920, 81_920);
        assertThat(s.pendingJobs()).isEmpty();
        assertThat(s.job("big").status()).isEqualTo(JobStatus.REJECTED);
    }

    @Test
    void cordonedNodesAndUnhealthyGpusGetNoNewWork() {
        Scheduler s = scheduler(pool(2, 2, A100), "binpack");
        s.setCordoned("a100-80gb-0", true);
        s.setGpuHealthy("a100-80gb-1", 0, false);
        submitAndRun(s, job("a", 1).build());
        assertThat(s.job("a").allocation().grants().getFirst()).satisfies(g -> {
            assertThat(s.cluster().node(g.node()).name()).isEqualTo("a100-80gb-1");
            assertThat(g.gpu()).isEqualTo(1);
        });
        submitAndRun(s, job("b", 1).build());
        assertThat(s.job("b").status()).isEqualTo(JobStatus.PENDING);
        // the only node with idle GPUs is cordoned: the refusal counts it
        assertThat(s.job("b").waitStatus().nodes()).anySatisfy(c -> {
            assertThat(c.reason().plugin()).isEqualTo("health");
            assertThat(c.nodes()).isEqualTo(1);
        });
    }

    @Test
    void tenantHardLimitHoldsJobsBack() {
        var cfg = SchedulerConfig.defaults("fcfs-backfill").withTenants(java.util.Map.of("t", new TenantConfig("t", 1, 0, 2)));
        Scheduler s = new Scheduler(pool(1, 8, A100), cfg);
        // GPUs as thousandths: 3 asked, the tenant's limit is 2
        assertRefusal(s.submit(job("three", 3).tenant("t").build(), 0).status(), Code.UNRESOLVABLE, Status.FEASIBILITY, Resource.GPU_COMPUTE, 3000, 2000, 2000);
        s.submit(job("a", 2).tenant("t").build(), 0);
        s.submit(job("b", 1).tenant("t").build(), 0);
        s.submit(job("other", 1).tenant("u").build(), 0);
        s.schedule(0);
        assertThat(s.job("a").status()).isEqualTo(JobStatus.RUNNING);
        assertThat(s.job("b").status()).isEqualTo(JobStatus.PENDING);
        assertRefusal(s.job("b").waitStatus(), Code.UNSCHEDULABLE, Status.QUOTA, Resource.GPU_COMPUTE, 1000, 0, 2000);
        assertThat(s.job("other").status()).isEqualTo(JobStatus.RUNNING);
    }

    @Test
    void placementConfigErrorsNameTheRule() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> PlacementConfig.parse("binpak"))
                .hasMessageContaining("unknown scorer 'binpak'").hasMessageContaining("best-fit");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> PlacementConfig.parse("binpack:-1"))
                .hasMessageContaining("weight must be > 0");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> PlacementConfig.parse("binpack;gpu=foo"))
                .hasMessageContaining("unknown GPU policy 'foo'");
    }
}
