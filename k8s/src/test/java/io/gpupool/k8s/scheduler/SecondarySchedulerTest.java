package io.gpupool.k8s.scheduler;

import io.gpupool.engine.status.Status;
import io.gpupool.engine.status.Resource;
import io.gpupool.engine.status.Code;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.gpupool.k8s.DeviceAnnotations;
import io.gpupool.k8s.K8sConfig;
import io.gpupool.k8s.KubeNames;
import io.gpupool.k8s.MockApiServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static io.gpupool.k8s.KubeFixtures.await;
import static io.gpupool.k8s.KubeFixtures.gangMember;
import static io.gpupool.k8s.KubeFixtures.gfdNode;
import static io.gpupool.k8s.KubeFixtures.hamiNode;
import static io.gpupool.k8s.KubeFixtures.pod;
import static io.gpupool.k8s.KubeFixtures.shared;
import static io.gpupool.k8s.KubeFixtures.uuid;
import static io.gpupool.k8s.KubeFixtures.wholeGpus;
import static org.assertj.core.api.Assertions.assertThat;

/** The secondary scheduler against fabric8's mock API server in CRUD mode. */
class SecondarySchedulerTest {
    static final long WAIT_MS = 30_000;
    MockApiServer api;
    KubernetesClient client;
    final List<SecondaryScheduler> schedulers = new ArrayList<>();

    @BeforeEach
    void startApiServer() {
        api = new MockApiServer();
        client = api.client();
    }

    @AfterEach
    void stop() {
        if (System.getenv("GPUPOOL_TEST_DUMP") != null) {
            for (Pod p : client.pods().inAnyNamespace().list().getItems()) System.out.println("DUMP " + p.getMetadata().getName() + " node=" + p.getSpec().getNodeName() + " " + conditionMessage(p));
        }
        schedulers.forEach(SecondaryScheduler::close);
        api.close();
    }

    private SecondaryScheduler start(String identity, boolean leaderElect) {
        return start(identity, leaderElect, K8sConfig.defaults());
    }

    private SecondaryScheduler start(String identity, boolean leaderElect, K8sConfig config) {
        // a lease long enough that a loaded test machine does not lose it between renewals; a handover on
        // release takes one retry period
        var o = SecondaryScheduler.Options.defaults(identity, "gpupool-system")
                .withLeaderElection(leaderElect, Duration.ofSeconds(10), Duration.ofSeconds(8), Duration.ofMillis(200));
        SecondaryScheduler s = new SecondaryScheduler(api.newClient(), config, o);
        schedulers.add(s);
        s.start();
        return s;
    }

    private Pod create(Pod p) {
        return client.pods().inNamespace(p.getMetadata().getNamespace()).resource(p).create();
    }

    private Pod get(String ns, String name) {
        return client.pods().inNamespace(ns).withName(name).get();
    }

    private boolean isBound(String ns, String name) {
        Pod p = get(ns, name);
        return p != null && p.getSpec().getNodeName() != null;
    }

    private static List<DeviceAnnotations.Device> devices(Pod p) {
        return DeviceAnnotations.decode(p.getMetadata().getAnnotations().get(KubeNames.DEVICES_ALLOCATED), "test").stream().flatMap(List::stream).toList();
    }

    private List<Event> events(String ns, String pod) {
        return client.v1().events().inNamespace(ns).list().getItems().stream()
                .filter(e -> pod.equals(e.getInvolvedObject().getName())).toList();
    }

    @Test
    void bindsPodsAndWritesHamiDecisionAnnotations() {
        client.nodes().resource(gfdNode("gfd-a100", "NVIDIA-A100-SXM4-80GB", 8, 81920)).create();
        client.nodes().resource(hamiNode("hami-t4", "NVIDIA-Tesla T4", 4, 15360)).create();
        start("only", false);
        create(pod("team-a", "trainer", Map.of("nvidia.com/gpu", "4"), Map.of(KubeNames.USE_GPU_TYPE, "A100-80GB")));
        create(pod("team-a", "infer", Map.of("nvidia.com/gpu", "1", "nvidia.com/gpumem", "4000", "nvidia.com/gpucores", "25"),
                Map.of(KubeNames.USE_GPU_TYPE, "T4")));
        await("both pods bound", WAIT_MS, () -> isBound("team-a", "trainer") && isBound("team-a", "infer"));

        Pod trainer = get("team-a", "trainer");
        Map<String, String> a = trainer.getMetadata().getAnnotations();
        assertThat(trainer.getSpec().getNodeName()).isEqualTo("gfd-a100").isEqualTo(a.get(KubeNames.ASSIGNED_NODE));
        assertThat(a).containsEntry(KubeNames.BIND_PHASE, "allocating").containsEntry(KubeNames.TENANT, "team-a")
                .containsKey(KubeNames.BIND_TIME).containsKey(KubeNames.ASSIGNED_TIME);
        assertThat(a.get(KubeNames.DEVICES_TO_ALLOCATE)).isEqualTo(a.get(KubeNames.DEVICES_ALLOCATED))
                .matches("(gfd-a100-gpu[0-7],NVIDIA,81920,100:){4};");
        assertThat(devices(trainer)).extracting(DeviceAnnotations.Device::uuid).doesNotHaveDuplicates();

        Pod infer = get("team-a", "infer");
        assertThat(infer.getSpec().getNodeName()).isEqualTo("hami-t4");
        List<DeviceAnnotations.Device> d = devices(infer);
        assertThat(d).hasSize(1);
        assertThat(d.getFirst().uuid()).startsWith(uuid("hami-t4", 0).substring(0, 13));
        assertThat(devices(trainer)).allMatch(x -> x.memoryMib() == 81920);
        assertThat(d.getFirst().memoryMib()).isEqualTo(4000);
        assertThat(d.getFirst().cores()).isEqualTo(25);
        // the Scheduled event follows the binding (as kube-scheduler's does), so it may come after the pod shows bound
        await("the Scheduled event", WAIT_MS, () -> events("team-a", "infer").stream()
                .anyMatch(e -> e.getReason().equals("Scheduled") && e.getMessage().contains("hami-t4")));
    }

    @Test
    void gangBindsAllOrNothing() {
        client.nodes().resource(gfdNode("n1", "NVIDIA-A100-SXM4-80GB", 4, 81920)).create();
        client.nodes().resource(gfdNode("n2", "NVIDIA-A100-SXM4-80GB", 4, 81920)).create();
        SecondaryScheduler s = start("only", false);
        // 3 replicas of 4 GPUs need 12 GPUs; two members arrive first, then the third
        create(gangMember("ml", "w0", "train", 3, 4));
        create(gangMember("ml", "w1", "train", 3, 4));
        await("members told they wait for the gang", WAIT_MS, () -> events("ml", "w1").stream().anyMatch(e -> e.getMessage().contains("2 of 3 members")));
        create(gangMember("ml", "w2", "train", 3, 4));
        await("the gang is told it cannot run on two nodes", WAIT_MS, () -> conditionMessage(get("ml", "w2")).contains("at most 2 such replicas"));
        assertThat((int) s.inspect(m -> m.engine().runningJobs().size())).isZero();
        assertThat(List.of("w0", "w1", "w2")).noneMatch(n -> isBound("ml", n));
        // a third node makes room for all three at once
        client.nodes().resource(gfdNode("n3", "NVIDIA-A100-SXM4-80GB", 4, 81920)).create();
        await("the whole gang bound", WAIT_MS, () -> List.of("w0", "w1", "w2").stream().allMatch(n -> isBound("ml", n)));
        assertThat(List.of("w0", "w1", "w2")).extracting(n -> get("ml", n).getSpec().getNodeName()).containsExactlyInAnyOrder("n1", "n2", "n3");
        assertThat(List.of("w0", "w1", "w2")).allMatch(n -> "gang:ml/train".equals(get("ml", n).getMetadata().getAnnotations().get(KubeNames.JOB)));
        // members end on their own: one finishing frees only its node
        client.pods().inNamespace("ml").withName("w0").delete();
        await("one member released", WAIT_MS, () -> s.inspect(m -> m.engine().runningJobs().size()) == 2);
    }

    @Test
    void fractionalPodsShareAGpuWithinItsMemory() {
        client.nodes().resource(hamiNode("t4", "NVIDIA-Tesla T4", 1, 15360)).create();
        SecondaryScheduler s = start("only", false);
        for (int i = 0; i < 4; i++) create(shared("inf", "p" + i, 6000, 20));
        // 15360 MiB holds two 6000 MiB shares, not three
        await("two shares bound", WAIT_MS, () -> s.bound() == 2);
        await("the others told why they wait", WAIT_MS, () -> List.of("p0", "p1", "p2", "p3").stream().filter(n -> !isBound("inf", n))
                .allMatch(n -> !conditionMessage(get("inf", n)).isEmpty() && waits(s, "inf/" + n, Resource.GPU_MEMORY)));
        List<Pod> boundPods = client.pods().inNamespace("inf").list().getItems().stream().filter(p -> p.getSpec().getNodeName() != null).toList();
        assertThat(boundPods).hasSize(2);
        long memory = boundPods.stream().flatMap(p -> devices(p).stream()).mapToLong(DeviceAnnotations.Device::memoryMib).sum();
        assertThat(memory).isLessThanOrEqualTo(15360);
        assertThat(boundPods.stream().flatMap(p -> devices(p).stream()).map(DeviceAnnotations.Device::uuid).distinct()).hasSize(1);
        // one share ends: a waiting one takes its place
        client.pods().inNamespace("inf").resource(boundPods.getFirst()).delete();
        await("a third share bound after one ended", WAIT_MS, () -> s.bound() == 3);
        s.inspect(m -> { m.engine().checkConsistency(); return null; });
    }

    @Test
    void aGangWaitsForRoomAndTakesItWhole() {
        for (String n : List.of("n1", "n2", "n3")) client.nodes().resource(gfdNode(n, "NVIDIA-A100-SXM4-80GB", 4, 81920)).create();
        SecondaryScheduler s = start("only", false);
        create(wholeGpus("ml", "blocker", 1));
        await("blocker bound", WAIT_MS, () -> isBound("ml", "blocker"));
        for (int i = 0; i < 3; i++) create(gangMember("ml", "w" + i, "train", 3, 4));
        await("the gang told why it waits", WAIT_MS, () -> !conditionMessage(get("ml", "w0")).isEmpty() && waits(s, "gang:ml/train", Resource.GPUS));
        assertThat(List.of("w0", "w1", "w2")).noneMatch(n -> isBound("ml", n));
        assertThat((int) s.inspect(m -> m.engine().runningJobs().size())).isEqualTo(1);
        client.pods().inNamespace("ml").withName("blocker").delete();
        await("the whole gang bound once the blocker left", WAIT_MS, () -> List.of("w0", "w1", "w2").stream().allMatch(n -> isBound("ml", n)));
        assertThat(List.of("w0", "w1", "w2")).extracting(n -> get("ml", n).getSpec().getNodeName()).containsExactlyInAnyOrder("n1", "n2", "n3");
    }

    @Test
    void namespacesAreTenantsWithTheirLimits() throws Exception {
        client.nodes().resource(gfdNode("n1", "NVIDIA-A100-SXM4-80GB", 8, 81920)).create();
        java.nio.file.Path file = java.nio.file.Files.createTempFile("gpupool", ".yaml");
        java.nio.file.Files.writeString(file, "policy: fcfs-backfill\ntenants:\n  - name: vision\n    namespaces: [vision, vision-dev]\n    limitGpus: 4\n");
        K8sConfig cfg = K8sConfig.load(file);
        SecondaryScheduler s = start("only", false, cfg);
        // a first: pods of different namespaces may reach the scheduler in any order
        create(wholeGpus("vision", "a", 3));
        await("a bound", WAIT_MS, () -> isBound("vision", "a"));
        create(wholeGpus("vision-dev", "b", 2));
        create(wholeGpus("other", "c", 2));
        await("c bound", WAIT_MS, () -> isBound("other", "c"));
        await("b told its tenant is at its limit", WAIT_MS, () -> !conditionMessage(get("vision-dev", "b")).isEmpty() && waits(s, "vision-dev/b", Resource.GPU_COMPUTE));
        // 2 GPUs asked, 1 left of the tenant's 4 (in thousandths of a GPU)
        Status quota = s.inspect(m -> m.engine().job("vision-dev/b").waitStatus());
        assertThat(quota).extracting(Status::plugin, Status::requested, Status::free, Status::capacity).containsExactly(Status.QUOTA, 2000L, 1000L, 4000L);
        assertThat(isBound("vision-dev", "b")).isFalse();
        assertThat(get("vision", "a").getMetadata().getAnnotations()).containsEntry(KubeNames.TENANT, "vision");
        client.pods().inNamespace("vision").withName("a").delete();
        await("b bound once a left", WAIT_MS, () -> isBound("vision-dev", "b") && s.bound() == 3);
    }

    /** Whether the engine's job waits, refused for now for want of this resource. */
    private static boolean waits(SecondaryScheduler s, String jobId, Resource resource) {
        Status why = s.inspect(m -> m.engine().job(jobId) == null ? null : m.engine().job(jobId).waitStatus());
        return why != null && why.code() == Code.UNSCHEDULABLE && why.resource() == resource;
    }

    private static String conditionMessage(Pod p) {
        if (p.getStatus() == null || p.getStatus().getConditions() == null) return "";
        return p.getStatus().getConditions().stream().filter(c -> c.getType().equals("PodScheduled")).map(PodCondition::getMessage).findFirst().orElse("");
    }

    @Test
    void impossiblePodsGetAnEventAndAConditionWithTheReason() {
        client.nodes().resource(gfdNode("n1", "NVIDIA-A100-SXM4-80GB", 8, 81920)).create();
        start("only", false);
        create(wholeGpus("x", "too-big", 16).edit().editMetadata().addToAnnotations(KubeNames.GANG, "g").endMetadata().build());
        create(wholeGpus("x", "nine", 9));
        create(pod("x", "bad-cores", Map.of("nvidia.com/gpu", "1", "nvidia.com/gpucores", "150"), Map.of()));
        await("all three explained", WAIT_MS, () -> List.of("too-big", "nine", "bad-cores").stream().allMatch(n -> !conditionMessage(get("x", n)).isEmpty()));
        assertThat(conditionMessage(get("x", "too-big"))).contains(KubeNames.GANG_MIN_MEMBERS);
        assertThat(conditionMessage(get("x", "nine"))).contains("cannot run on this cluster").contains("largest node");
        assertThat(conditionMessage(get("x", "bad-cores"))).contains("nvidia.com/gpucores").contains("0..100");
        assertThat(events("x", "nine")).anyMatch(e -> e.getType().equals("Warning") && e.getReason().equals("FailedScheduling"));
        PodCondition c = get("x", "nine").getStatus().getConditions().getFirst();
        assertThat(c.getStatus()).isEqualTo("False");
        assertThat(c.getReason()).isEqualTo("Unschedulable");
        assertThat(List.of("too-big", "nine", "bad-cores")).noneMatch(n -> isBound("x", n));
    }

    @Test
    void aRestartRebuildsStateFromAnnotationsWithoutDoubleAllocation() {
        client.nodes().resource(gfdNode("n1", "NVIDIA-A100-SXM4-80GB", 8, 81920)).create();
        client.nodes().resource(hamiNode("t4", "NVIDIA-Tesla T4", 1, 15360)).create();
        SecondaryScheduler first = start("first", false);
        for (int i = 0; i < 3; i++) create(wholeGpus("r", "w" + i, 2));
        create(onT4(shared("r", "s0", 8000, 50)));
        await("first scheduler bound 4 pods", WAIT_MS, () -> first.bound() == 4);
        first.close();
        SecondaryScheduler second = start("second", false);
        // 2 whole GPUs are left on n1 and 7360 MiB on the T4 (15360 as HAMi registered it)
        create(wholeGpus("r", "w3", 2));
        create(wholeGpus("r", "w4", 2));
        create(onT4(shared("r", "s1", 7000, 50)));
        create(onT4(shared("r", "s2", 7000, 50)));
        await("the second binds what fits", WAIT_MS, () -> second.bound() == 2);
        await("the rest is told it waits", WAIT_MS, () -> !conditionMessage(get("r", "w4")).isEmpty() || !conditionMessage(get("r", "w3")).isEmpty());
        Map<String, Integer> holders = new HashMap<>();
        long t4Memory = 0;
        for (Pod p : client.pods().inNamespace("r").list().getItems()) {
            if (p.getSpec().getNodeName() == null) continue;
            for (var d : devices(p)) {
                if (d.cores() == 100) assertThat(holders.merge(d.uuid(), 1, Integer::sum)).as("GPU %s held once", d.uuid()).isEqualTo(1);
                else t4Memory += d.memoryMib();
            }
        }
        assertThat(holders).hasSize(8);
        assertThat(t4Memory).isEqualTo(15000);
        assertThat((int) second.inspect(m -> m.engine().runningJobs().size())).isEqualTo(6);
        second.inspect(m -> { m.engine().checkConsistency(); return null; });
    }

    private static Pod onT4(Pod p) {
        return p.edit().editMetadata().addToAnnotations(KubeNames.USE_GPU_TYPE, "T4").endMetadata().build();
    }

    @Test
    void leaderElectionHandsOverToTheOtherReplica() {
        client.nodes().resource(gfdNode("n1", "NVIDIA-A100-SXM4-80GB", 8, 81920)).create();
        SecondaryScheduler a = start("replica-a", true);
        SecondaryScheduler b = start("replica-b", true);
        await("one replica leads", WAIT_MS, () -> a.leading() ^ b.leading());
        SecondaryScheduler leader = a.leading() ? a : b;
        SecondaryScheduler follower = leader == a ? b : a;
        create(wholeGpus("le", "before", 4));
        await("the leader binds", WAIT_MS, () -> isBound("le", "before"));
        assertThat(follower.bound()).isZero();
        leader.close();
        await("the other replica takes the lease", WAIT_MS, follower::leading);
        var lease = client.leases().inNamespace("gpupool-system").withName("gpupool-scheduler").get();
        assertThat(lease.getSpec().getHolderIdentity()).isEqualTo(follower == a ? "replica-a" : "replica-b");
        create(wholeGpus("le", "after", 4));
        await("the new leader binds", WAIT_MS, () -> isBound("le", "after") && follower.bound() == 1);
        List<String> uuids = new ArrayList<>();
        for (String n : List.of("before", "after")) devices(get("le", n)).forEach(d -> uuids.add(d.uuid()));
        assertThat(uuids).hasSize(8).doesNotHaveDuplicates();
    }
}
