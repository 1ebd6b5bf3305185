package io.gpupool.engine;

import io.gpupool.engine.status.Status;
import io.gpupool.engine.status.Resource;
import io.gpupool.engine.status.Code;
import io.gpupool.engine.placement.CycleState;
import io.gpupool.engine.placement.PlacementConfig;
import io.gpupool.engine.placement.PlacementPipeline;
import io.gpupool.engine.placement.PlacementResult;
import io.gpupool.engine.placement.WorkloadProfile;
import io.gpupool.engine.state.Allocation;
import io.gpupool.engine.state.ClusterState;
import io.gpupool.engine.state.GpuGrant;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.GpuShare;
import io.gpupool.model.JobSpec;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static io.gpupool.engine.RefusalAssert.assertRefusal;
import static io.gpupool.engine.TestPools.A100;
import static io.gpupool.engine.TestPools.T4;
import static io.gpupool.engine.TestPools.node;
import static org.assertj.core.api.Assertions.assertThat;

/** {@code PlacementPipeline.placeGiven}: an answer chosen elsewhere is bound only if the engine's own rules allow it. */
class PlaceGivenTest {
    // a100: two NVLink domains {0,1} {2,3}; t4: no NVLink, split count 2
    private final ClusterState cluster = new ClusterState(new ClusterSpec(List.of(
            node("a100", A100, 4, List.of(List.of(0, 1), List.of(2, 3)), 1.0, 10),
            node("t4", T4, 2, List.of(), 1.0, 2))));
    private final PlacementPipeline pipeline = new PlacementPipeline(PlacementConfig.defaults());

    private PlacementResult place(JobSpec job, boolean bind, int[]... replicas) {
        List<List<GpuGrant>> reps = new ArrayList<>();
        for (int[] r : replicas) {
            List<GpuGrant> rep = new ArrayList<>();
            for (int i = 1; i < r.length; i++) rep.add(new GpuGrant(r[0], r[i], 0, 0, false));
            reps.add(rep);
        }
        return pipeline.placeGiven(new CycleState(cluster, job, new WorkloadProfile(), null), new Allocation(job.id(), reps), bind);
    }

    private String state() {
        StringBuilder sb = new StringBuilder();
        for (var n : cluster.nodes()) for (int g = 0; g < n.gpuCount(); g++) sb.append(n.freeMilli(g)).append('/').append(n.freeMemoryMib(g)).append('/').append(n.tasks(g)).append(' ');
        return sb.toString();
    }

    @Test
    void bindsAValidAnswerWithTheGrantsPlaceWouldMake() {
        PlacementResult r = place(JobSpec.builder("w").gpus(2).requireNvlink(true).build(), true, new int[] {0, 2, 3});
        assertThat(r.ok()).isTrue();
        assertThat(r.allocation().grants()).containsExactly(new GpuGrant(0, 2, 1000, 81920, true), new GpuGrant(0, 3, 1000, 81920, true));
        PlacementResult s = place(JobSpec.builder("s").share(new GpuShare(300, 0)).build(), true, new int[] {1, 0});
        assertThat(s.allocation().grants()).containsExactly(new GpuGrant(1, 0, 300, (long) Math.ceil(15360 * 0.3), false));
        assertThat(cluster.node(0).fullyFreeGpus()).isEqualTo(2);
        assertThat(cluster.node(1).freeMilli(0)).isEqualTo(700);
    }

    @Test
    void rejectsWhatTheEngineWouldNeverGrantAndChangesNothing() {
        place(JobSpec.builder("busy").gpus(1).build(), true, new int[] {0, 0});
        String before = state();
        // an answer that does not fit the job or the pool is an error; one that is not free now is not schedulable
        record Case(JobSpec job, Code code, String plugin, Resource resource, int[][] replicas) {}
        List<Case> cases = List.of(
                new Case(JobSpec.builder("taken").gpus(1).build(), Code.UNSCHEDULABLE, Status.GPU_POLICY, Resource.GPUS, new int[][] {{0, 0}}),
                new Case(JobSpec.builder("split").gpus(2).requireNvlink(true).build(), Code.UNSCHEDULABLE, Status.GPU_POLICY, Resource.NVLINK, new int[][] {{0, 1, 2}}),
                new Case(JobSpec.builder("count").gpus(2).build(), Code.ERROR, Status.GPU_POLICY, Resource.NONE, new int[][] {{0, 1}}),
                new Case(JobSpec.builder("twice").gpus(2).build(), Code.ERROR, Status.GPU_POLICY, Resource.NONE, new int[][] {{0, 1, 1}}),
                new Case(JobSpec.builder("model").gpus(1).allowedModels(Set.of("T4")).build(), Code.UNRESOLVABLE, "gpu-model", Resource.GPU_MODEL, new int[][] {{0, 1}}),
                new Case(JobSpec.builder("memory").share(new GpuShare(100, 20_000)).build(), Code.UNSCHEDULABLE, Status.GPU_POLICY, Resource.GPU_MEMORY, new int[][] {{1, 0}}),
                new Case(JobSpec.builder("nogpu").gpus(1).build(), Code.ERROR, Status.GPU_POLICY, Resource.NONE, new int[][] {{1, 7}}),
                new Case(JobSpec.builder("nonode").gpus(1).build(), Code.ERROR, Status.PLACEMENT, Resource.NONE, new int[][] {{5, 0}}),
                new Case(JobSpec.builder("gang").shape(2, 1).build(), Code.UNSCHEDULABLE, Status.GPU_POLICY, Resource.GPUS, new int[][] {{0, 1}, {0, 1}}),
                new Case(JobSpec.builder("short").shape(2, 1).build(), Code.ERROR, Status.PLACEMENT, Resource.NONE, new int[][] {{0, 1}}));
        for (Case c : cases) {
            PlacementResult r = place(c.job(), true, c.replicas());
            assertThat(r.ok()).as(c.job().id()).isFalse();
            assertRefusal(r.status(), c.code(), c.plugin(), c.resource());
            assertThat(state()).as(c.job().id() + " leaves the cluster as it was").isEqualTo(before);
        }
        assertThat(place(cases.get(8).job(), true, cases.get(8).replicas()).reason()).as("names the replica and its node").contains("replica 2/2 on a100");
        cluster.setCordoned(1, true);
        PlacementResult r = place(JobSpec.builder("cordon").gpus(1).build(), true, new int[] {1, 0});
        assertRefusal(r.status(), Code.UNSCHEDULABLE, "health", Resource.NONE);
    }

    @Test
    void splitCountAndRepeatedSharesCountTogether() {
        JobSpec a = JobSpec.builder("a").milli(400).build();
        JobSpec b = JobSpec.builder("b").milli(400).build();
        JobSpec c = JobSpec.builder("c").milli(100).build();
        assertThat(place(a, true, new int[] {1, 1}).ok()).isTrue();
        assertThat(place(b, true, new int[] {1, 1}).ok()).isTrue();
        // compute (200 free) and memory suffice: the split count of 2 tasks per GPU is what is short
        assertRefusal(place(c, true, new int[] {1, 1}).status(), Code.UNSCHEDULABLE, Status.GPU_POLICY, Resource.NONE);
        assertThat(place(c, false, new int[] {1, 0}).ok()).isTrue();
        assertThat(cluster.node(1).tasks(0)).as("a dry run binds nothing").isZero();
    }
}
