package io.gpupool.k8s.extender;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.fabric8.kubernetes.api.model.NodeList;
import io.fabric8.kubernetes.api.model.Pod;

import java.util.List;
import java.util.Map;

/**
 * The messages of kube-scheduler's extender protocol (k8s.io/kube-scheduler/extender/v1, types.go), with
 * the keys Go's encoding/json gives them: the Go field names, every field present, nil as null, in the
 * order the structs declare them. Pods and Nodes are Kubernetes objects in their own JSON form.
 */
public final class ExtenderTypes {
    private ExtenderTypes() {}

    /** The top score an extender gives (MaxExtenderPriority); kube-scheduler scales it to its 0..100. */
    public static final long MAX_EXTENDER_PRIORITY = 10;

    /** Filter and prioritize request. Nodes when nodeCacheCapable is false, NodeNames when it is true. */
    @JsonInclude(JsonInclude.Include.ALWAYS)
    @JsonPropertyOrder({"Pod", "Nodes", "NodeNames"})
    public record ExtenderArgs(@JsonProperty("Pod") Pod pod, @JsonProperty("Nodes") NodeList nodes,
                               @JsonProperty("NodeNames") List<String> nodeNames) {}

    /** Filter answer; nodes in FailedAndUnresolvableNodes are not retried by preemption. */
    @JsonInclude(JsonInclude.Include.ALWAYS)
    @JsonPropertyOrder({"Nodes", "NodeNames", "FailedNodes", "FailedAndUnresolvableNodes", "Error"})
    public record ExtenderFilterResult(@JsonProperty("Nodes") NodeList nodes, @JsonProperty("NodeNames") List<String> nodeNames,
                                       @JsonProperty("FailedNodes") Map<String, String> failedNodes,
                                       @JsonProperty("FailedAndUnresolvableNodes") Map<String, String> failedAndUnresolvableNodes,
                                       @JsonProperty("Error") String error) {}

    /** One node's score (prioritize answers a list of them). */
    @JsonInclude(JsonInclude.Include.ALWAYS)
    @JsonPropertyOrder({"Host", "Score"})
    public record HostPriority(@JsonProperty("Host") String host, @JsonProperty("Score") long score) {}

    @JsonInclude(JsonInclude.Include.ALWAYS)
    @JsonPropertyOrder({"PodName", "PodNamespace", "PodUID", "Node"})
    public record ExtenderBindingArgs(@JsonProperty("PodName") String podName, @JsonProperty("PodNamespace") String podNamespace,
                                      @JsonProperty("PodUID") String podUID, @JsonProperty("Node") String node) {}

    @JsonInclude(JsonInclude.Include.ALWAYS)
    @JsonPropertyOrder({"Error"})
    public record ExtenderBindingResult(@JsonProperty("Error") String error) {}

    /** Preempt request: full victim pods when nodeCacheCapable is false, their UIDs when it is true. */
    @JsonInclude(JsonInclude.Include.ALWAYS)
    @JsonPropertyOrder({"Pod", "NodeNameToVictims", "NodeNameToMetaVictims"})
    public record ExtenderPreemptionArgs(@JsonProperty("Pod") Pod pod,
                                         @JsonProperty("NodeNameToVictims") Map<String, Victims> nodeNameToVictims,
                                         @JsonProperty("NodeNameToMetaVictims") Map<String, MetaVictims> nodeNameToMetaVictims) {}

    @JsonInclude(JsonInclude.Include.ALWAYS)
    @JsonPropertyOrder({"Pods", "NumPDBViolations"})
    public record Victims(@JsonProperty("Pods") List<Pod> pods, @JsonProperty("NumPDBViolations") long numPDBViolations) {}

    @JsonInclude(JsonInclude.Include.ALWAYS)
    @JsonPropertyOrder({"UID"})
    public record MetaPod(@JsonProperty("UID") String uid) {}

    @JsonInclude(JsonInclude.Include.ALWAYS)
    @JsonPropertyOrder({"Pods", "NumPDBViolations"})
    public record MetaVictims(@JsonProperty("Pods") List<MetaPod> pods, @JsonProperty("NumPDBViolations") long numPDBViolations) {}

    @JsonInclude(JsonInclude.Include.ALWAYS)
    @JsonPropertyOrder({"NodeNameToMetaVictims"})
    public record ExtenderPreemptionResult(@JsonProperty("NodeNameToMetaVictims") Map<String, MetaVictims> nodeNameToMetaVictims) {}
}
