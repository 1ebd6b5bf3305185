package io.gpupool.engine;

import io.gpupool.engine.status.Status;
import io.gpupool.engine.status.Resource;
import io.gpupool.engine.status.Code;
import io.gpupool.engine.placement.PlacementConfig;
import io.gpupool.engine.placement.WorkloadProfile;
import io.gpupool.engine.placement.plugins.Fragmentation;
import io.gpupool.engine.state.Allocation;
import io.gpupool.engine.state.GpuGrant;
import io.gpupool.engine.state.NodeState;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.GpuDevice;
import io.gpupool.model.HostResources;
import io.gpupool.model.JobSpec;
import io.gpupool.model.NodeSpec;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.IntStream;

import static io.gpupool.engine.RefusalAssert.assertRefusal;
import static io.gpupool.engine.TestPools.A100;
import static io.gpupool.engine.TestPools.job;
import static org.assertj.core.api.Assertions.assertThat;

/** Host CPU and memory: jobs ask for them per replica, nodes offer them, placement and admission respect them. */
class HostResourcesTest {

    /** A node of {@code gpus} A100s whose host has {@code cores} cores and 256 GiB. */
    private static NodeSpec node(String name, int gpus, int cores) {
        List<GpuDevice> devs = IntStream.range(0, gpus).mapToObj(i -> new GpuDevice(i, "GPU-" + name + "-" + i, A100, true)).toList();
        return new NodeSpec(name, devs, cores * 1000L, 262_144, List.of(), 1.0, 10, Map.of());
    }

    private static Scheduler scheduler(String placement, NodeSpec... nodes) {
        return new Scheduler(new ClusterSpec(List.of(nodes)), SchedulerConfig.defaults("fcfs").withPlacement(PlacementConfig.parse(placement)));
    }

    private static String nodeOf(Scheduler s, String job) {
        return s.cluster().node(s.job(job).allocation().nodeOf(0)).name();
    }

    private static NodeState node(Scheduler s, String name) {
        return s.cluster().node(s.cluster().nodeId(name));
    }

    private static void run(Scheduler s, JobSpec j) {
        assertThat(s.submit(j, 0).accepted()).as("accepted %s", j.id()).isTrue();
        s.schedule(0);
        s.checkConsistency();
    }

    @Test
    void aNodeWithoutTheCpuLeftIsPassedOverEvenByBinpack() {
        Scheduler s = scheduler("binpack", node("small", 8, 16), node("big", 8, 64));
        run(s, job("first", 1).host(12_000, 1024).build());
        assertThat(nodeOf(s, "first")).isEqualTo("small");
        assertThat(node(s, "small").freeCpuMilli()).isEqualTo(4_000);
        assertThat(node(s, "small").freeHostMemoryMib()).isEqualTo(262_144 - 1024);
        // binpack prefers the busier node, but "small" has 4 cores left and the job asks for 8
        run(s, job("second", 1).host(8_000, 1024).build());
        assertThat(nodeOf(s, "second")).isEqualTo("big");
        // a job asking for no host resources still fills "small"
        run(s, job("third", 1).build());
        assertThat(nodeOf(s, "third")).isEqualTo("small");
    }

    @Test
    void finishingAndPreemptingGiveTheHostBack() {
        Scheduler s = scheduler("binpack", node("n", 4, 16));
        run(s, job("a", 1).host(10_000, 100_000).build());
        assertThat(s.submit(job("b", 1).host(10_000, 0).build(), 0).accepted()).isTrue();
        s.schedule(0);
        assertThat(s.job("b").status()).isEqualTo(JobStatus.PENDING);
        assertRefusal(s.job("b").waitStatus(), Code.UNSCHEDULABLE, "host", Resource.HOST_CPU, 10_000, 6_000, 16_000);
        s.complete("a", 1000);
        assertThat(node(s, "n").freeCpuMilli()).isEqualTo(16_000);
        assertThat(node(s, "n").freeHostMemoryMib()).isEqualTo(262_144);
        s.schedule(1000);
        assertThat(s.job("b").status()).isEqualTo(JobStatus.RUNNING);
        s.preempt("b", 2000);
        assertThat(node(s, "n").freeCpuMilli()).isEqualTo(16_000);
        s.checkConsistency();
    }

    @Test
    void aJobThatFailsForCpuDoesNotHoldBackOneOfTheSameGpuShapeThatAsksLess() {
        // the round skips a job that does not fit (qssf); a failed GPU shape is remembered for the round,
        // but "big" and "small" differ in CPU only: "small" must still start
        Scheduler s = new Scheduler(new ClusterSpec(List.of(node("n", 4, 16))),
                SchedulerConfig.defaults("qssf").withPlacement(PlacementConfig.parse("binpack")));
        run(s, job("hog", 1).host(12_000, 0).estimateSec(10).build());
        assertThat(s.submit(job("big", 1).host(8_000, 0).estimateSec(10).build(), 0).accepted()).isTrue();
        assertThat(s.submit(job("small", 1).host(2_000, 0).estimateSec(20).build(), 0).accepted()).isTrue();
        s.schedule(0);
        assertThat(s.job("big").status()).isEqualTo(JobStatus.PENDING);
        assertThat(s.job("small").status()).isEqualTo(JobStatus.RUNNING);
        s.checkConsistency();
    }

    @Test
    void aGangTakesTheHostOncePerReplicaAndIsRejectedWhenNoPoolCouldHoldIt() {
        Scheduler s = scheduler("binpack", node("n", 8, 20));
        run(s, job("gang", 2).shape(2, 1).host(10_000, 1024).build());
        assertThat(s.job("gang").allocation().nodesUsed()).isEqualTo(1);
        assertThat(node(s, "n").freeCpuMilli()).isZero();
        SubmitResult tooBig = s.submit(job("huge", 1).host(24_000, 0).build(), 0);
        assertThat(tooBig.accepted()).isFalse();
        assertRefusal(tooBig.status(), Code.UNRESOLVABLE, Status.FEASIBILITY, Resource.HOST_CPU, 24_000, 20_000, 20_000);
        // 3 replicas of 10 cores: the only node holds 2 at a time, so the gang could never start
        SubmitResult gang3 = s.submit(job("gang3", 3).shape(3, 1).host(10_000, 0).build(), 0);
        assertThat(gang3.accepted()).isFalse();
        assertRefusal(gang3.status(), Code.UNRESOLVABLE, Status.FEASIBILITY, Resource.NODES, 3, 2, 2);
    }

    @Test
    void aRestoredJobWhoseHostNoLongerFitsIsRefusedAndChangesNothing() {
        Scheduler s = scheduler("binpack", node("n", 4, 16));
        run(s, job("a", 1).host(12_000, 0).build());
        int gpu = s.job("a").allocation().grants().getFirst().gpu() == 0 ? 1 : 0;
        Allocation recorded = new Allocation("b", List.of(List.of(new GpuGrant(0, gpu, 1000, A100.memoryMib(), true))));
        SubmitResult r = s.restoreRunning(job("b", 1).host(8_000, 0).build(), recorded, 0, 0);
        assertThat(r.accepted()).isFalse();
        assertRefusal(r.status(), Code.ERROR, Status.RESTORE, Resource.NONE);
        assertThat(node(s, "n").freeCpuMilli()).isEqualTo(4_000);
        assertThat(node(s, "n").fullyFreeGpus()).isEqualTo(3);
        SubmitResult ok = s.restoreRunning(job("c", 1).host(4_000, 0).build(),
                new Allocation("c", List.of(List.of(new GpuGrant(0, gpu, 1000, A100.memoryMib(), true)))), 0, 0);
        assertThat(ok.accepted()).isTrue();
        assertThat(node(s, "n").freeCpuMilli()).isZero();
        s.checkConsistency();
    }

    @Test
    void fgdCountsGpusOnANodeShortOfCpuAsFragmentedAndAvoidsStrandingThem() {
        // "tight": 4 GPUs, 16 cores, one GPU and 10 cores already held; "roomy": 4 GPUs, 64 cores, empty.
        // The mix: tasks of 1 GPU + 10 cores and of 1 GPU + 4 cores, half each. A 1 GPU + 4 cores task on
        // "tight" would leave 2 idle GPUs with 2 cores: no typical task can use them (fragmentation 2000 milli,
        // up from 3000 x 0.5 = 1500); on "roomy" nothing is stranded (0 before, 0 after). Binpack and best-fit
        // (GPUs only) take "tight", FGD takes "roomy".
        for (String placement : List.of("fgd", "binpack", "best-fit")) {
            Scheduler s = scheduler(placement, node("tight", 4, 16), node("roomy", 4, 64));
            assertThat(s.restoreRunning(job("held", 1).host(10_000, 0).build(),
                    new Allocation("held", List.of(List.of(new GpuGrant(0, 0, 1000, A100.memoryMib(), true)))), 0, 0).accepted()).isTrue();
            run(s, job("task", 1).host(4_000, 0).build());
            assertThat(nodeOf(s, "task")).as(placement).isEqualTo(placement.equals("fgd") ? "roomy" : "tight");
        }
        List<WorkloadProfile.Shape> mix = List.of(
                new WorkloadProfile.Shape(1, 1000, Set.of(), new HostResources(10_000, 0), 0.5),
                new WorkloadProfile.Shape(1, 1000, Set.of(), new HostResources(4_000, 0), 0.5));
        Scheduler s = scheduler("binpack", node("tight", 4, 16));
        s.restoreRunning(job("held", 1).host(10_000, 0).build(),
                new Allocation("held", List.of(List.of(new GpuGrant(0, 0, 1000, A100.memoryMib(), true)))), 0, 0);
        assertThat(Fragmentation.of(node(s, "tight"), mix, null, null)).isEqualTo(1500.0);
        s.restoreRunning(job("more", 1).host(4_000, 0).build(),
                new Allocation("more", List.of(List.of(new GpuGrant(0, 1, 1000, A100.memoryMib(), true)))), 0, 0);
        assertThat(Fragmentation.of(node(s, "tight"), mix, null, null)).isEqualTo(2000.0);
    }
}
