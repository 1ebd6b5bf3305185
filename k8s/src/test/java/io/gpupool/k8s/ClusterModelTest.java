package io.gpupool.k8s;

import io.gpupool.engine.status.Status;
import io.gpupool.engine.status.Resource;
import io.gpupool.engine.status.Code;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.gpupool.model.GpuCatalog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import static io.gpupool.k8s.KubeFixtures.gangMember;
import static io.gpupool.k8s.KubeFixtures.gfdNode;
import static io.gpupool.k8s.KubeFixtures.wholeGpus;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The secondary scheduler's model driven event by event, in orders the informers may deliver, with the API
 * server played here: every report the model makes is written on the pod as its PodScheduled condition,
 * and that write comes back to the model as a pod update, as it does through the informer.
 */
class ClusterModelTest {
    final AtomicLong clock = new AtomicLong(1_700_000_000_000L);
    final ClusterModel model = new ClusterModel(K8sConfig.defaults(), GpuCatalog.standard(), true, clock::get);
    /** The pods as the API server holds them. */
    final Map<String, Pod> api = new HashMap<>();
    /** Condition writes made but not yet seen by the model, in the order the API answers them. */
    final Deque<ClusterModel.Report> writes = new ArrayDeque<>();
    /** The report each pod's PodScheduled condition was last written from. */
    final Map<String, ClusterModel.Report> written = new HashMap<>();
    int created;

    /** The pod as the API server creates it: a uid and a creation time, later for each pod. */
    private Pod withMeta(Pod p) {
        Pod created = new PodBuilder(p).editMetadata().withUid("uid-" + p.getMetadata().getName())
                .withCreationTimestamp(Instant.ofEpochSecond(1_700_000_000L + this.created++).toString()).endMetadata().build();
        api.put(Pods.key(created), created);
        return created;
    }

    private void create(Pod p) {
        model.setPod(withMeta(p));
        round();
    }

    /** A scheduling round; its reports go to the API server. */
    private List<ClusterModel.Decision> round() {
        List<ClusterModel.Decision> d = model.schedule();
        writes.addAll(model.drainReports());
        return d;
    }

    /** The API server answers the oldest write to this pod; the model sees the pod updated by it, then runs a round. */
    private void answer(String name) {
        ClusterModel.Report r = writes.stream().filter(w -> w.name().equals(name)).findFirst().orElseThrow();
        writes.remove(r);
        written.put(name, r);
        String key = r.namespace() + "/" + r.name();
        Pod updated = new PodBuilder(api.get(key)).editOrNewStatus().withConditions(List.of()).addNewCondition()
                .withType("PodScheduled").withStatus("False").withReason("Unschedulable").withMessage(r.message()).endCondition()
                .endStatus().build();
        api.put(key, updated);
        model.setPod(updated);
        round();
    }

    /** Answers the writes, those of this pod first, until the model has nothing more to say (or it never stops). */
    private void answerAll(String first) {
        for (int answered = 0; !writes.isEmpty(); answered++) {
            assertThat(answered).as("the scheduler keeps rewriting its own reports").isLessThan(100);
            boolean firstPending = writes.stream().anyMatch(w -> w.name().equals(first));
            answer(firstPending ? first : writes.peekFirst().name());
        }
    }

    /** The refusal the pod's PodScheduled condition tells. */
    private Status condition(String name) {
        Pod p = api.get("ml/" + name);
        ClusterModel.Report r = written.get(name);
        assertThat(r).as("a condition on " + name).isNotNull();
        String shown = p.getStatus().getConditions().stream().filter(c -> c.getType().equals("PodScheduled")).findFirst().orElseThrow().getMessage();
        assertThat(shown).as("the condition is the report's").isEqualTo(r.message());
        return r.status();
    }

    @ParameterizedTest(name = "the write on {0} answered first")
    @ValueSource(strings = {"w0", "w1", "w2"})
    void aGangThatCannotFitKeepsSayingSoThroughItsOwnStatusUpdatesAndStartsWhenANodeJoins(String answeredFirst) {
        model.setNode(gfdNode("n1", "NVIDIA-A100-SXM4-80GB", 4, 81920));
        model.setNode(gfdNode("n2", "NVIDIA-A100-SXM4-80GB", 4, 81920));
        create(gangMember("ml", "w0", "train", 3, 4));
        create(gangMember("ml", "w1", "train", 3, 4));
        answerAll("w0");
        assertThat(condition("w1")).extracting(Status::code, Status::plugin).containsExactly(Code.UNSCHEDULABLE, ClusterModel.GANG);
        // the third member makes the gang whole: 3 replicas of 4 GPUs cannot fit two 4-GPU nodes
        create(gangMember("ml", "w2", "train", 3, 4));
        // the refusal's condition writes come back as updates, in any order
        answerAll(answeredFirst);
        for (String n : List.of("w0", "w1", "w2")) {
            assertThat(condition(n)).as(n).extracting(Status::code, Status::plugin, Status::resource, Status::requested, Status::capacity)
                    .containsExactly(Code.UNRESOLVABLE, Status.FEASIBILITY, Resource.NODES, 3L, 2L);
        }
        assertThat(model.engine().runningJobs()).isEmpty();

        model.setNode(gfdNode("n3", "NVIDIA-A100-SXM4-80GB", 4, 81920));
        List<ClusterModel.Decision> bound = round();
        assertThat(bound).extracting(ClusterModel.Decision::name).containsExactlyInAnyOrder("w0", "w1", "w2");
        assertThat(bound).extracting(ClusterModel.Decision::node).containsExactlyInAnyOrder("n1", "n2", "n3");
        // the rebuild admitted the members one by one, but none is told it waits once the gang is placed
        assertThat(writes).isEmpty();
    }

    @Test
    void theExtendersFilterTellsNodesThatMayTakeThePodLaterFromNodesThatNeverCan() {
        model.setNode(gfdNode("a100", "NVIDIA-A100-SXM4-80GB", 4, 81920));
        model.setNode(KubeFixtures.hamiNode("t4", "NVIDIA-Tesla T4", 4, 15360));
        Map<String, String> a100Only = Map.of(KubeNames.USE_GPU_TYPE, "A100-80GB");
        create(KubeFixtures.pod("ml", "hog", Map.of("nvidia.com/gpu", "3"), a100Only));
        assertThat(model.engine().runningJobs()).as("hog holds 3 of the A100 node's 4 GPUs: %s", writes).hasSize(1);
        Pod p = withMeta(KubeFixtures.pod("ml", "p", Map.of("nvidia.com/gpu", "2"), a100Only));
        ClusterModel.FilterOutcome f = model.filter(p, List.of("a100", "t4", "cpu-only"));
        assertThat(f.passed()).isEmpty();
        // the A100 node lacks free GPUs now: preempting there could help
        assertThat(f.failed()).containsOnlyKeys("a100");
        // a T4 is never allowed, a node gpupool knows no GPUs of never holds one
        assertThat(f.unresolvable()).containsOnlyKeys("t4", "cpu-only");
        Pod any = withMeta(wholeGpus("ml", "any", 2));
        assertThat(model.filter(any, List.of("a100", "t4")).passed()).containsExactly("t4");
    }

    @Test
    void membersArrivingTogetherAreBoundWithoutBeingToldTheyWait() {
        for (String n : List.of("n1", "n2", "n3")) model.setNode(gfdNode(n, "NVIDIA-A100-SXM4-80GB", 4, 81920));
        model.schedule();
        // one informer batch holds all three (a Job creating its pods at once)
        for (String n : List.of("w0", "w1", "w2")) model.setPod(withMeta(gangMember("ml", n, "train", 3, 4)));
        assertThat(round()).extracting(ClusterModel.Decision::name).containsExactlyInAnyOrder("w0", "w1", "w2");
        // a "waits for gang" condition written after the binding would mark a bound pod unschedulable
        assertThat(writes).isEmpty();
    }

    @Test
    void aPodWhoseBindingWasRefusedIsPlacedAgainAfterItsBackoff() {
        model.setNode(gfdNode("n1", "NVIDIA-A100-SXM4-80GB", 4, 81920));
        model.setPod(withMeta(wholeGpus("ml", "p", 2)));
        List<ClusterModel.Decision> placed = round();
        assertThat(placed).extracting(ClusterModel.Decision::name).containsExactly("p");
        // the API refuses the binding (a 409 on the decision's update): the pod backs off 1 s, then queues again
        model.bindFailed(placed.getFirst());
        assertThat(round()).as("backing off").isEmpty();
        clock.addAndGet(1000);
        assertThat(round()).extracting(ClusterModel.Decision::name).containsExactly("p");
    }
}
