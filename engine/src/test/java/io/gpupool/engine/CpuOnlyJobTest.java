package io.gpupool.engine;

import io.gpupool.engine.status.Status;
import io.gpupool.engine.status.Resource;
import io.gpupool.engine.status.Code;
import io.gpupool.engine.placement.PlacementConfig;
import io.gpupool.engine.state.Allocation;
import io.gpupool.engine.state.NodeState;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.GpuDevice;
import io.gpupool.model.GpuShare;
import io.gpupool.model.JobSpec;
import io.gpupool.model.NodeSpec;
import io.gpupool.model.SpecException;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import static io.gpupool.engine.RefusalAssert.assertRefusal;
import static io.gpupool.engine.TestPools.A100;
import static io.gpupool.engine.TestPools.job;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * CPU-only jobs (the openb pods with no GPU): zero GPUs per replica, host CPU and memory only, placed by the
 * same pipeline as GPU jobs and released exactly.
 */
class CpuOnlyJobTest {

    /** A node of {@code gpus} A100s whose host has {@code cores} cores and 256 GiB. */
    private static NodeSpec node(String name, int gpus, int cores) {
        List<GpuDevice> devs = IntStream.range(0, gpus).mapToObj(i -> new GpuDevice(i, "GPU-" + name + "-" + i, A100, true)).toList();
        return new NodeSpec(name, devs, cores * 1000L, 262_144, List.of(), 1.0, 10, Map.of());
    }

    private static Scheduler scheduler(String placement, NodeSpec... nodes) {
        return new Scheduler(new ClusterSpec(List.of(nodes)), SchedulerConfig.defaults("fcfs").withPlacement(PlacementConfig.parse(placement)));
    }

    private static JobSpec.Builder cpuJob(String id, long cpuMilli, long memMib) {
        return JobSpec.builder(id).shape(1, 0).host(cpuMilli, memMib);
    }

    private static NodeState node(Scheduler s, String name) {
        return s.cluster().node(s.cluster().nodeId(name));
    }

    private static String nodeOf(Scheduler s, String job) {
        return s.cluster().node(s.job(job).allocation().nodeOf(0)).name();
    }

    private static void run(Scheduler s, JobSpec j) {
        assertThat(s.submit(j, 0).accepted()).as("accepted %s", j.id()).isTrue();
        s.schedule(0);
        s.checkConsistency();
    }

    @Test
    void aJobWithNoGpusMustAskForTheHostAndNothingOfAGpu() {
        assertThat(cpuJob("ok", 4_000, 0).build().cpuOnly()).isTrue();
        assertThat(job("gpu", 1).build().cpuOnly()).isFalse();
        assertThatThrownBy(() -> JobSpec.builder("nothing").shape(1, 0).build())
                .isInstanceOf(SpecException.class).hasMessageContaining("must ask for host CPU or memory");
        assertThatThrownBy(() -> cpuJob("share", 1_000, 0).share(new GpuShare(500, 0)).build())
                .isInstanceOf(SpecException.class).hasMessageContaining("takes no GPU share");
        assertThatThrownBy(() -> cpuJob("nv", 1_000, 0).requireNvlink(true).build())
                .isInstanceOf(SpecException.class).hasMessageContaining("no NVLink rule");
        // a GPU count of 0 from a user (the service's and the readers' num_gpus) is still an error
        assertThatThrownBy(() -> JobSpec.builder("zero").gpus(0)).isInstanceOf(SpecException.class).hasMessageContaining("num_gpus");
    }

    @Test
    void itTakesTheHostAndNoGpuAndCompletingGivesExactlyThatBack() {
        Scheduler s = scheduler("binpack", node("n", 4, 16));
        run(s, job("gpu", 1).host(2_000, 1_024).build());
        run(s, cpuJob("cpu", 6_000, 10_000).build());
        assertThat(s.job("cpu").status()).isEqualTo(JobStatus.RUNNING);
        Allocation a = s.job("cpu").allocation();
        assertThat(a.grants()).isEmpty();
        assertThat(a.replicas()).hasSize(1);
        assertThat(nodeOf(s, "cpu")).isEqualTo("n");
        assertThat(node(s, "n").freeCpuMilli()).isEqualTo(8_000);
        assertThat(node(s, "n").freeHostMemoryMib()).isEqualTo(262_144 - 11_024);
        assertThat(node(s, "n").fullyFreeGpus()).isEqualTo(3);
        assertThat(s.cluster().usedMilli()).isEqualTo(1_000);
        s.complete("cpu", 10);
        s.checkConsistency();
        assertThat(node(s, "n").freeCpuMilli()).isEqualTo(14_000);
        assertThat(node(s, "n").freeHostMemoryMib()).isEqualTo(262_144 - 1_024);
        assertThat(node(s, "n").fullyFreeGpus()).isEqualTo(3);
    }

    @Test
    void hostLimitsHoldAtAdmissionAndAtPlacementAndPreemptionGivesTheHostBack() {
        Scheduler s = scheduler("binpack", node("a", 2, 8), node("b", 2, 8));
        SubmitResult tooBig = s.submit(cpuJob("huge", 12_000, 0).build(), 0);
        assertThat(tooBig.accepted()).isFalse();
        assertRefusal(tooBig.status(), Code.UNRESOLVABLE, Status.FEASIBILITY, Resource.HOST_CPU, 12_000, 8_000, 8_000);
        // three replicas of 6 cores: at most one per 8-core node, so never
        SubmitResult gang = s.submit(JobSpec.builder("gang3").shape(3, 0).host(6_000, 0).build(), 0);
        assertThat(gang.accepted()).isFalse();
        assertRefusal(gang.status(), Code.UNRESOLVABLE, Status.FEASIBILITY, Resource.NODES, 3, 2, 2);

        run(s, cpuJob("c1", 6_000, 0).build());
        run(s, cpuJob("c2", 6_000, 0).build());
        assertThat(List.of(nodeOf(s, "c1"), nodeOf(s, "c2"))).containsExactlyInAnyOrder("a", "b");
        assertThat(s.submit(cpuJob("c3", 6_000, 0).build(), 0).accepted()).isTrue();
        s.schedule(0);
        assertThat(s.job("c3").status()).isEqualTo(JobStatus.PENDING);
        assertRefusal(s.job("c3").waitStatus(), Code.UNSCHEDULABLE, "host", Resource.HOST_CPU, 6_000, 2_000, 8_000);
        // a GPU job that needs 4 cores cannot start either: the GPUs are idle but their hosts are short of CPU
        assertThat(s.submit(job("g", 1).host(4_000, 0).build(), 0).accepted()).isTrue();
        s.schedule(0);
        assertThat(s.job("g").status()).isEqualTo(JobStatus.PENDING);
        String freed = nodeOf(s, "c1");
        s.preempt("c1", 5);
        s.checkConsistency();
        assertThat(node(s, freed).freeCpuMilli()).isEqualTo(8_000);
        s.cancel("c1", 5);
        s.schedule(5);
        s.checkConsistency();
        assertThat(s.job("c3").status()).isEqualTo(JobStatus.RUNNING);
        assertThat(nodeOf(s, "c3")).isEqualTo(freed);
        assertThat(s.job("g").status()).isEqualTo(JobStatus.PENDING);
    }

    @Test
    void aGangOfCpuOnlyReplicasIsAllOrNothingAndAFailureLeavesTheHostsAsTheyWere() {
        Scheduler s = scheduler("binpack", node("a", 2, 8), node("b", 2, 8), node("c", 2, 8));
        run(s, cpuJob("hog", 6_000, 0).build());
        // two replicas fit (one on each other node), the third does not: nothing may stay taken
        assertThat(s.submit(JobSpec.builder("gang").shape(3, 0).host(6_000, 0).build(), 0).accepted()).isTrue();
        s.schedule(0);
        s.checkConsistency();
        assertThat(s.job("gang").status()).isEqualTo(JobStatus.PENDING);
        long free = s.cluster().nodes().stream().mapToLong(NodeState::freeCpuMilli).sum();
        assertThat(free).isEqualTo(24_000 - 6_000);
        s.complete("hog", 10);
        s.schedule(10);
        s.checkConsistency();
        assertThat(s.job("gang").status()).isEqualTo(JobStatus.RUNNING);
        assertThat(s.job("gang").allocation().nodesUsed()).isEqualTo(3);
        assertThat(s.cluster().nodes().stream().mapToLong(NodeState::freeCpuMilli).sum()).isEqualTo(6_000);
    }

    @Test
    void batchModeLeavesCpuOnlyJobsToTheUsualLoop() {
        Scheduler s = scheduler("binpack", node("n", 2, 16));
        List<List<String>> shown = new java.util.ArrayList<>();
        s.setBatchPlacer(new io.gpupool.engine.batch.BatchPlacer() {
            @Override public String name() { return "recording"; }
            @Override public int window() { return 8; }
            @Override public Map<String, Allocation> plan(Batch batch) {
                shown.add(batch.jobs().stream().map(JobSpec::id).toList());
                return Map.of();
            }
        });
        assertThat(s.submit(cpuJob("cpu", 4_000, 0).build(), 0).accepted()).isTrue();
        assertThat(s.submit(job("gpu", 1).host(4_000, 0).build(), 0).accepted()).isTrue();
        assertThat(s.schedule(0).started()).containsExactlyInAnyOrder("cpu", "gpu");
        assertThat(shown).containsExactly(List.of("gpu"));
        s.checkConsistency();
    }

    @Test
    void aRestoredCpuOnlyJobNamesItsNode() {
        Scheduler s = scheduler("binpack", node("a", 2, 8), node("b", 2, 8));
        assertThatThrownBy(() -> new Allocation("x", List.of(List.of())))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("needs its node given");
        JobSpec spec = cpuJob("x", 5_000, 0).build();
        assertThat(s.restoreRunning(spec, new Allocation("x", List.of(List.of()), spec.host(), List.of(7)), 0, 0).accepted()).isFalse();
        assertThat(s.restoreRunning(spec, new Allocation("x", List.of(List.of()), spec.host(), List.of(1)), 0, 0).accepted()).isTrue();
        s.checkConsistency();
        assertThat(node(s, "b").freeCpuMilli()).isEqualTo(3_000);
        // a second one no longer fits on b: refused, nothing changed
        JobSpec more = cpuJob("y", 5_000, 0).build();
        assertThat(s.restoreRunning(more, new Allocation("y", List.of(List.of()), more.host(), List.of(1)), 0, 0).accepted()).isFalse();
        assertThat(node(s, "b").freeCpuMilli()).isEqualTo(3_000);
        s.checkConsistency();
    }

    @Test
    void fgdPutsItWhereItStrandsNoGpuWhileBinpackAndBestFitFillTheFullerHost() {
        // "lean": 4 GPUs, 16 cores; "rich": 4 GPUs, 64 cores; the GPU tasks need 1 GPU and 8 cores each. A CPU-only
        // task of 12 cores on "lean" leaves 4 cores: its 4 idle GPUs are stranded (fragmentation +4000 milli);
        // on "rich" 52 cores are left and nothing is stranded. Binpack (host use after placing: 75% against 19%)
        // and best-fit (GPUs left equal, CPU left 4 against 52 cores) take "lean"; FGD takes "rich".
        for (String placement : List.of("fgd", "binpack", "best-fit")) {
            Scheduler s = scheduler(placement, node("lean", 4, 16), node("rich", 4, 64));
            s.workloadProfile().observe(job("typical", 1).host(8_000, 0).build());
            run(s, cpuJob("cpu", 12_000, 0).build());
            assertThat(nodeOf(s, "cpu")).as(placement).isEqualTo(placement.equals("fgd") ? "rich" : "lean");
            assertThat(s.cluster().usedMilli()).isZero();
        }
        // CPU-only jobs are not typical GPU tasks: the profile does not learn them
        Scheduler s = scheduler("fgd", node("n", 1, 8));
        run(s, cpuJob("c", 1_000, 0).build());
        assertThat(s.workloadProfile().observed()).isZero();
    }
}
