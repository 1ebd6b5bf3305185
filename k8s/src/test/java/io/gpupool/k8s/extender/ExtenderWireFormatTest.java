package io.gpupool.k8s.extender;

import io.gpupool.k8s.extender.ExtenderTypes.ExtenderArgs;
import io.gpupool.k8s.extender.ExtenderTypes.ExtenderBindingArgs;
import io.gpupool.k8s.extender.ExtenderTypes.ExtenderBindingResult;
import io.gpupool.k8s.extender.ExtenderTypes.ExtenderFilterResult;
import io.gpupool.k8s.extender.ExtenderTypes.ExtenderPreemptionArgs;
import io.gpupool.k8s.extender.ExtenderTypes.ExtenderPreemptionResult;
import io.gpupool.k8s.extender.ExtenderTypes.HostPriority;
import io.gpupool.k8s.extender.ExtenderTypes.MetaPod;
import io.gpupool.k8s.extender.ExtenderTypes.MetaVictims;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The extender messages against golden files that Go's encoding/json wrote from the extender/v1 types
 * (src/test/go/extendergolden): what kube-scheduler sends must decode, and what gpupool answers must be
 * the bytes a Go extender would send.
 */
class ExtenderWireFormatTest {
    private final ExtenderJson json = new ExtenderJson();
    private static final JsonMapper TREE = JsonMapper.builder().build();

    static String golden(String name) {
        try (InputStream in = ExtenderWireFormatTest.class.getResourceAsStream("/extender-golden/" + name)) {
            if (in == null) throw new AssertionError("no golden file " + name);
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).stripTrailing();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    private static final String NO_GPUS = "node has no GPUs gpupool knows of (no HAMi registration, no GPU feature discovery labels)";

    @Test
    void answersAreTheBytesGoWrites() {
        assertThat(json.write(new ExtenderFilterResult(null, List.of("gpu-a"), Map.of("gpu-b", "without a GPU that has the memory"),
                Map.of("cpu-1", NO_GPUS), ""))).isEqualTo(golden("filter-result-node-names.json"));
        assertThat(json.write(new ExtenderFilterResult(null, null, Map.of(), Map.of(), "the request has no Pod")))
                .isEqualTo(golden("filter-result-error.json"));
        assertThat(json.write(List.of(new HostPriority("gpu-a", 10), new HostPriority("gpu-b", 4), new HostPriority("cpu-1", 0))))
                .isEqualTo(golden("prioritize-result.json"));
        assertThat(json.write(new ExtenderBindingResult(""))).isEqualTo(golden("bind-result-ok.json"));
        assertThat(json.write(new ExtenderBindingResult("tenant vision holds 8 of its limit of 8 GPUs; <quota> & more\u2028")))
                .as("Go escapes <, >, & and U+2028").isEqualTo(golden("bind-result-error.json"));
        Map<String, MetaVictims> victims = new LinkedHashMap<>();
        victims.put("gpu-b", new MetaVictims(List.of(new MetaPod("u-2")), 1));
        victims.put("gpu-a", new MetaVictims(List.of(new MetaPod("u-1")), 0));
        assertThat(json.write(new ExtenderPreemptionResult(victims))).as("map keys sorted as Go sorts them").isEqualTo(golden("preempt-result.json"));
    }

    @Test
    void aFilterAnswerWithNodesHasGosKeysAndTheNodesAsKubernetesJson() {
        ExtenderArgs args = json.read(golden("filter-args-nodes.json"), ExtenderArgs.class);
        var kept = new io.fabric8.kubernetes.api.model.NodeList();
        kept.setItems(List.of(args.nodes().getItems().getFirst()));
        kept.setMetadata(args.nodes().getMetadata());
        JsonNode ours = TREE.readTree(json.write(new ExtenderFilterResult(kept, null, Map.of("gpu-b", "without a GPU that has the memory"), Map.of("cpu-1", NO_GPUS), "")));
        JsonNode go = TREE.readTree(golden("filter-result-nodes.json"));
        assertThat(ours.propertyNames()).containsExactlyElementsOf(go.propertyNames());
        for (String k : List.of("NodeNames", "FailedNodes", "FailedAndUnresolvableNodes", "Error")) assertThat(ours.get(k)).as(k).isEqualTo(go.get(k));
        JsonNode node = ours.get("Nodes").get("items").get(0);
        JsonNode goNode = go.get("Nodes").get("items").get(0);
        assertThat(node.get("metadata").get("name")).isEqualTo(goNode.get("metadata").get("name"));
        assertThat(node.get("metadata").get("labels")).isEqualTo(goNode.get("metadata").get("labels"));
        assertThat(node.get("status").get("allocatable")).isEqualTo(goNode.get("status").get("allocatable"));
    }

    @Test
    void requestsAsKubeSchedulerSendsThemDecode() {
        ExtenderArgs names = json.read(golden("filter-args-node-names.json"), ExtenderArgs.class);
        assertThat(names.nodes()).isNull();
        assertThat(names.nodeNames()).containsExactly("gpu-a", "gpu-b", "cpu-1");
        assertThat(names.pod().getMetadata().getName()).isEqualTo("train-0");
        assertThat(names.pod().getSpec().getContainers().getFirst().getResources().getLimits().get("nvidia.com/gpumem").toString()).isEqualTo("20000");

        ExtenderArgs nodes = json.read(golden("filter-args-nodes.json"), ExtenderArgs.class);
        assertThat(nodes.nodeNames()).isNull();
        assertThat(nodes.nodes().getItems()).extracting(n -> n.getMetadata().getName()).containsExactly("gpu-a", "gpu-b", "cpu-1");
        assertThat(nodes.nodes().getItems().getFirst().getMetadata().getLabels()).containsEntry("nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB");

        ExtenderBindingArgs bind = json.read(golden("bind-args.json"), ExtenderBindingArgs.class);
        assertThat(bind).isEqualTo(new ExtenderBindingArgs("train-0", "vision", "6f1c2f0e-0000-4000-8000-000000000001", "gpu-a"));

        ExtenderPreemptionArgs meta = json.read(golden("preempt-args-meta.json"), ExtenderPreemptionArgs.class);
        assertThat(meta.nodeNameToVictims()).isNull();
        assertThat(meta.nodeNameToMetaVictims().get("gpu-a").pods()).containsExactly(new MetaPod("6f1c2f0e-0000-4000-8000-0000000000a1"));
        assertThat(meta.nodeNameToMetaVictims().get("gpu-b").numPDBViolations()).isEqualTo(1);

        ExtenderPreemptionArgs full = json.read(golden("preempt-args-victims.json"), ExtenderPreemptionArgs.class);
        assertThat(full.nodeNameToMetaVictims()).isNull();
        assertThat(full.nodeNameToVictims().get("gpu-a").pods().getFirst().getMetadata().getUid()).isEqualTo("6f1c2f0e-0000-4000-8000-0000000000a1");
        assertThat(full.nodeNameToVictims().get("gpu-a").numPDBViolations()).isEqualTo(2);
    }

    @Test
    void keysInAnyCaseDecodeAsGoDecodesThem() {
        ExtenderArgs args = json.read(golden("filter-args-lowercase.input.json"), ExtenderArgs.class);
        JsonNode go = TREE.readTree(golden("filter-args-lowercase.decoded.json"));
        assertThat(args.nodeNames()).containsExactly(go.get("NodeNames").get(0).asString());
        assertThat(args.nodes()).isNull();
        assertThat(go.get("Nodes").isNull()).isTrue();
        assertThat(args.pod().getMetadata().getUid()).isEqualTo(go.get("Pod").get("metadata").get("uid").asString());

        ExtenderBindingArgs bind = json.read(golden("bind-args-mixedcase.input.json"), ExtenderBindingArgs.class);
        JsonNode goBind = TREE.readTree(golden("bind-args-mixedcase.decoded.json"));
        assertThat(TREE.readTree(json.write(bind))).isEqualTo(goBind);

        ExtenderPreemptionArgs pre = json.read(golden("preempt-args-lowercase.input.json"), ExtenderPreemptionArgs.class);
        JsonNode goPre = TREE.readTree(golden("preempt-args-lowercase.decoded.json"));
        assertThat(TREE.readTree(json.write(pre.nodeNameToMetaVictims()))).isEqualTo(goPre.get("NodeNameToMetaVictims"));
        assertThat(pre.nodeNameToVictims()).isNull();
    }
}
