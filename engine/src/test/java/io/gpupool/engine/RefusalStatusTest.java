package io.gpupool.engine;

import io.gpupool.engine.placement.PlacementResult;
import io.gpupool.engine.status.Code;
import io.gpupool.engine.status.NodeCount;
import io.gpupool.engine.status.Resource;
import io.gpupool.engine.status.Status;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.GpuShare;
import io.gpupool.model.JobSpec;
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
import static org.assertj.core.api.Assertions.tuple;

/** Every refusal carries its data: how final it is, the plugin, the resource, the amounts, the nodes per reason. */
class RefusalStatusTest {

    @Test
    void anEmptyPoolRejectsEveryJobSayingItHasNoNodes() {
        Scheduler s = new Scheduler(new ClusterSpec(List.of()), SchedulerConfig.defaults("fcfs"));
        for (JobSpec j : List.of(job("whole", 2).build(), job("typed", 1).allowedModels(Set.of("T4")).build(),
                JobSpec.builder("cpu").shape(1, 0).host(1_000, 0).build())) {
            SubmitResult r = s.submit(j, 0);
            assertThat(r.accepted()).as(j.id()).isFalse();
            assertRefusal(r.status(), Code.UNRESOLVABLE, Status.FEASIBILITY, Resource.NODES, 1, 0, 0);
            // not "asks for 0m CPU, 0 MiB RAM per replica, more than any node offers"
            assertThat(r.reason()).as(j.id()).contains("the pool has no nodes");
            assertThat(s.job(j.id()).waitStatus()).as("the rejected job keeps why").isEqualTo(r.status());
        }
    }

    @Test
    void aDuplicateIdIsAnError() {
        Scheduler s = new Scheduler(pool(1, 4, A100), SchedulerConfig.defaults("fcfs"));
        s.submit(job("a", 1).build(), 0);
        assertRefusal(s.submit(job("a", 1).build(), 0).status(), Code.ERROR, Status.SUBMIT, Resource.NONE);
    }

    @Test
    void aFailedPlacementCountsTheNodesPerReasonWithTheMostAnyHadFree() {
        // two A100 nodes whose hosts are mostly taken (6 and 16 of 96 cores left) and a cordoned T4 node
        Scheduler s = new Scheduler(new ClusterSpec(List.of(
                node("a0", A100, 4, List.of(), 1.0, 10), node("a1", A100, 4, List.of(), 1.0, 10), node("t0", T4, 4, List.of(), 1.0, 10))),
                SchedulerConfig.defaults("fcfs"));
        s.submit(job("f0", 1).host(90_000, 0).build(), 0);
        assertThat(s.startOn("f0", "a0", 0).ok()).isTrue();
        s.submit(job("f1", 1).host(80_000, 0).build(), 0);
        assertThat(s.startOn("f1", "a1", 0).ok()).isTrue();
        s.setCordoned("t0", true);
        s.submit(job("big", 1).allowedModels(Set.of("A100-80GB")).host(20_000, 0).build(), 0);
        s.schedule(0);
        Status why = s.job("big").waitStatus();
        assertRefusal(why, Code.UNSCHEDULABLE, "host", Resource.HOST_CPU, 20_000, 16_000, 96_000);
        assertThat(why.nodes()).extracting(c -> c.reason().plugin(), c -> c.reason().resource(), NodeCount::nodes)
                .containsExactly(tuple("host", Resource.HOST_CPU, 2), tuple("health", Resource.NONE, 1));
        assertThat(s.job("big").waitReason()).as("the wait reason renders the status").isEqualTo("waits: " + why.message());
    }

    @Test
    void aShareRefusedOnANodeSaysHowMuchItHadFree() {
        // a share of 600 milli: the GPU of a100-80gb-0 has 500 free, that of a100-80gb-1 300
        Scheduler s = new Scheduler(pool(2, 1, A100), SchedulerConfig.defaults("fcfs"));
        s.submit(job("x", 1).share(new GpuShare(500, 0)).build(), 0);
        assertThat(s.startOn("x", "a100-80gb-0", 0).ok()).isTrue();
        s.submit(job("y", 1).share(new GpuShare(700, 0)).build(), 0);
        assertThat(s.startOn("y", "a100-80gb-1", 0).ok()).isTrue();
        s.submit(job("z", 1).share(new GpuShare(600, 0)).build(), 0);
        assertRefusal(s.startOn("z", "a100-80gb-1", 0).status(), Code.UNSCHEDULABLE, "capacity", Resource.GPU_COMPUTE, 600, 300, 1000);
        // a round visits no node (the capacity index has no free share of 600): the amounts say what was asked
        s.schedule(0);
        assertRefusal(s.job("z").waitStatus(), Code.UNSCHEDULABLE, "capacity", Resource.GPU_COMPUTE, 600, Status.UNKNOWN, 1000);
        assertThat(s.job("z").waitStatus().nodes()).isEmpty();
    }

    @Test
    void aShareWithoutGpuMemoryIsRefusedByTheGpuPolicyWithTheMemoryItCouldFind() {
        // T4 has 15360 MiB; one share takes 10000 MiB, so a second asking 8000 MiB finds the compute but not the memory
        Scheduler s = new Scheduler(pool(1, 1, T4), SchedulerConfig.defaults("fcfs"));
        s.submit(job("m1", 1).share(new GpuShare(200, 10_000)).build(), 0);
        s.schedule(0);
        s.submit(job("m2", 1).share(new GpuShare(200, 8_000)).build(), 0);
        s.schedule(0);
        Status why = s.job("m2").waitStatus();
        assertRefusal(why, Code.UNSCHEDULABLE, Status.GPU_POLICY, Resource.GPU_MEMORY, 8_000, 5_360, 15_360);
        assertThat(why.nodes()).singleElement().satisfies(c -> assertThat(c.nodes()).isEqualTo(1));
    }

    @Test
    void backfillRefusalsNameThePluginAndKeepTheCause() {
        // fcfs-backfill: "head" waits for 4 GPUs with a reservation; "long" would fit now but run past it
        Scheduler s = new Scheduler(pool(1, 4, A100), SchedulerConfig.defaults("fcfs-backfill"));
        s.submit(job("run", 2).estimateSec(100).build(), 0);
        s.schedule(0);
        s.submit(job("head", 4).estimateSec(100).submitMs(1).build(), 1);
        s.submit(job("long", 2).estimateSec(1_000).submitMs(2).build(), 2);
        s.schedule(2);
        assertThat(s.job("long").status()).isEqualTo(JobStatus.PENDING);
        Status why = s.job("long").waitStatus();
        assertRefusal(why, Code.UNSCHEDULABLE, Status.BACKFILL, Resource.GPUS);
        assertThat(why.requested()).isEqualTo(2);
        assertRefusal(s.job("head").waitStatus(), Code.UNSCHEDULABLE, "capacity", Resource.GPUS);
    }

    @Test
    void aNoteOnTheRoundIsNoRefusal() {
        Scheduler s = new Scheduler(pool(1, 4, A100), SchedulerConfig.defaults("fcfs"));
        s.submit(job("run", 1).build(), 0);
        s.schedule(0);
        s.submit(job("head", 4).build(), 1);
        s.submit(job("behind", 1).build(), 1);
        s.schedule(1);
        assertThat(s.job("head").waitStatus()).isNotNull();
        assertThat(s.job("behind").waitStatus()).as("queued behind a strict head").isNull();
        assertThat(s.job("behind").waitReason()).isNotNull();
    }
}
