package io.gpupool.k8s.extender;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.gpupool.k8s.DeviceAnnotations;
import io.gpupool.k8s.K8sConfig;
import io.gpupool.k8s.KubeNames;
import io.gpupool.k8s.MockApiServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;

import static io.gpupool.k8s.KubeFixtures.await;
import static io.gpupool.k8s.KubeFixtures.gfdNode;
import static io.gpupool.k8s.KubeFixtures.hamiNode;
import static io.gpupool.k8s.KubeFixtures.pod;
import static io.gpupool.k8s.extender.ExtenderWireFormatTest.golden;
import static org.assertj.core.api.Assertions.assertThat;

/** The extender over HTTP, as kube-scheduler calls it, with pods and nodes on the mock API server. */
class ExtenderServerTest {
    private static final JsonMapper TREE = JsonMapper.builder().build();
    MockApiServer api;
    KubernetesClient client;
    Extender extender;
    ExtenderServer server;
    final HttpClient http = HttpClient.newHttpClient();

    @BeforeEach
    void start() throws Exception {
        api = new MockApiServer();
        client = api.client();
        // the nodes of the golden scenario: gpu-b's card has less memory than the pod asks for
        client.nodes().resource(gfdNode("gpu-a", "NVIDIA-A100-SXM4-80GB", 8, 81920)).create();
        client.nodes().resource(hamiNode("gpu-b", "NVIDIA-Tesla T4", 4, 15360)).create();
        client.nodes().resource(new io.fabric8.kubernetes.api.model.NodeBuilder().withNewMetadata().withName("cpu-1").endMetadata().build()).create();
        extender = new Extender(api.newClient(), K8sConfig.defaults(), true);
        extender.start();
        await("node cache filled", 30_000, () -> extender.inspect(m -> m.engine().cluster().nodeCount()) == 2);
        server = new ExtenderServer(extender, "127.0.0.1", 0);
        server.start();
    }

    @AfterEach
    void stop() {
        server.close();
        extender.close();
        api.close();
    }

    private HttpResponse<String> post(String verb, String body) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/" + verb))
                .POST(HttpRequest.BodyPublishers.ofString(body)).header("Content-Type", "application/json").build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void filterWithNodeNamesAnswersExactlyWhatTheGoldenFileSays() throws Exception {
        HttpResponse<String> r = post("filter", golden("filter-args-node-names.json"));
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).isEqualTo(golden("filter-result-node-names.json"));
    }

    @Test
    void filterWithNodesAnswersWithTheNodesThatFit() throws Exception {
        Extender fromRequests = new Extender(api.newClient(), K8sConfig.defaults(), false);
        fromRequests.start();
        try (ExtenderServer s2 = new ExtenderServer(fromRequests, "127.0.0.1", 0)) {
            s2.start();
            // the Node objects in the request are the node state: both A100 nodes fit, the CPU node has no GPUs
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s2.port() + "/filter"))
                    .POST(HttpRequest.BodyPublishers.ofString(golden("filter-args-nodes.json"))).build(), HttpResponse.BodyHandlers.ofString());
            JsonNode body = TREE.readTree(r.body());
            assertThat(body.get("NodeNames").isNull()).isTrue();
            assertThat(body.get("Nodes").get("items").valueStream().map(n -> n.get("metadata").get("name").asString()).toList()).containsExactly("gpu-a", "gpu-b");
            assertThat(body.get("FailedAndUnresolvableNodes").propertyNames()).containsExactly("cpu-1");
            assertThat(body.get("Error").asString()).isEmpty();
        } finally {
            fromRequests.close();
        }
    }

    @Test
    void prioritizeRanksWithTheEngineScorersBindWritesTheDecisionAndPreemptChecksTheVictims() throws Exception {
        // one pod already holds 3 of gpu-a's 8 GPUs: binpack prefers the busier node for the next pod
        Pod p0 = client.pods().inNamespace("vision").resource(pod("vision", "old-0", Map.of("nvidia.com/gpu", "3"), Map.of())).create();
        String b0 = "{\"PodName\":\"old-0\",\"PodNamespace\":\"vision\",\"PodUID\":\"" + p0.getMetadata().getUid() + "\",\"Node\":\"gpu-a\"}";
        assertThat(post("bind", b0).body()).isEqualTo(golden("bind-result-ok.json"));
        client.nodes().resource(gfdNode("gpu-c", "NVIDIA-A100-SXM4-80GB", 8, 81920)).create();
        await("gpu-c in the cache", 30_000, () -> extender.inspect(m -> m.engine().cluster().nodeCount()) == 3);

        Pod p1 = client.pods().inNamespace("vision").resource(pod("vision", "train-1", Map.of("nvidia.com/gpu", "4"), Map.of())).create();
        String args = "{\"Pod\":" + new io.fabric8.kubernetes.client.utils.KubernetesSerialization().asJson(p1) + ",\"Nodes\":null,\"NodeNames\":[\"gpu-c\",\"gpu-a\",\"gpu-b\",\"cpu-1\"]}";
        JsonNode scores = TREE.readTree(post("prioritize", args).body());
        assertThat(scores.valueStream().map(s -> s.get("Host").asString() + "=" + s.get("Score").asLong()).toList())
                .containsExactly("gpu-c=0", "gpu-a=10", "gpu-b=0", "cpu-1=0");

        String bind = "{\"PodName\":\"train-1\",\"PodNamespace\":\"vision\",\"PodUID\":\"" + p1.getMetadata().getUid() + "\",\"Node\":\"gpu-a\"}";
        assertThat(post("bind", bind).body()).isEqualTo("{\"Error\":\"\"}");
        Pod bound = client.pods().inNamespace("vision").withName("train-1").get();
        assertThat(bound.getSpec().getNodeName()).isEqualTo("gpu-a");
        var devices = DeviceAnnotations.decode(bound.getMetadata().getAnnotations().get(KubeNames.DEVICES_ALLOCATED), "t").getFirst();
        assertThat(devices).hasSize(4).allMatch(d -> d.uuid().startsWith("gpu-a-gpu") && d.cores() == 100);
        // gpu-a has 1 GPU left: a second 4-GPU bind there is refused with the reason, and nothing changes
        Pod p2 = client.pods().inNamespace("vision").resource(pod("vision", "train-2", Map.of("nvidia.com/gpu", "4"), Map.of())).create();
        String bind2 = "{\"podName\":\"train-2\",\"podNamespace\":\"vision\",\"node\":\"gpu-a\"}";
        assertThat(TREE.readTree(post("bind", bind2).body()).get("Error").asString()).as("names the node").contains("gpu-a");
        assertThat(client.pods().inNamespace("vision").withName("train-2").get().getSpec().getNodeName()).isNull();

        // preempt: evicting train-1 makes room on gpu-a for train-2; evicting nothing on gpu-b does not (a T4 node of 4 would, but not 4 A100)
        String pre = "{\"Pod\":" + new io.fabric8.kubernetes.client.utils.KubernetesSerialization().asJson(p2)
                + ",\"NodeNameToMetaVictims\":{\"gpu-a\":{\"Pods\":[{\"UID\":\"" + p1.getMetadata().getUid() + "\"}],\"NumPDBViolations\":1},"
                + "\"cpu-1\":{\"Pods\":[],\"NumPDBViolations\":0}}}";
        JsonNode kept = TREE.readTree(post("preempt", pre).body()).get("NodeNameToMetaVictims");
        assertThat(kept.propertyNames()).containsExactly("gpu-a");
        assertThat(kept.get("gpu-a").get("Pods").get(0).get("UID").asString()).isEqualTo(p1.getMetadata().getUid());
        assertThat(kept.get("gpu-a").get("NumPDBViolations").asLong()).isEqualTo(1);
        extender.inspect(m -> { m.engine().checkConsistency(); return null; });
    }

    @Test
    void aRestartedExtenderKnowsWhatIsHeldFromTheAnnotations() throws Exception {
        Pod p = client.pods().inNamespace("v").resource(pod("v", "big", Map.of("nvidia.com/gpu", "8"), Map.of())).create();
        assertThat(post("bind", "{\"PodName\":\"big\",\"PodNamespace\":\"v\",\"Node\":\"gpu-a\"}").body()).isEqualTo("{\"Error\":\"\"}");
        Extender again = new Extender(api.newClient(), K8sConfig.defaults(), true);
        again.start();
        try {
            await("the new extender sees the bound pod", 30_000, () -> again.inspect(m -> m.engine().runningJobs().size()) == 1);
            Pod next = pod("v", "next", Map.of("nvidia.com/gpu", "1"), Map.of());
            var f = again.filter(new ExtenderTypes.ExtenderArgs(next, null, List.of("gpu-a")));
            // full now, not ruled out: kube-scheduler may preempt there
            assertThat(f.failedNodes()).containsOnlyKeys("gpu-a");
            assertThat(f.failedAndUnresolvableNodes()).isEmpty();
        } finally {
            again.close();
        }
        assertThat(p.getMetadata().getUid()).isNotEmpty();
    }

    @Test
    void malformedRequestsGet400WithTheReasonNot500() throws Exception {
        HttpResponse<String> r = post("filter", "{\"Pod\": [1,2");
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(TREE.readTree(r.body()).get("Error").asString()).contains("not a valid ExtenderArgs");
        HttpResponse<String> b = post("bind", "");
        assertThat(b.statusCode()).isEqualTo(400);
        assertThat(TREE.readTree(b.body()).get("Error").asString()).isNotEmpty();
        assertThat(TREE.readTree(post("filter", "{}").body()).get("Error").asString()).isEqualTo("the request has no Pod");
        HttpResponse<String> get = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/filter")).GET().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(get.statusCode()).isEqualTo(405);
    }
}
