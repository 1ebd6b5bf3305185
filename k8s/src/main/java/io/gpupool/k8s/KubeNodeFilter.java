package io.gpupool.k8s;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirement;
import io.fabric8.kubernetes.api.model.NodeSelectorTerm;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.Toleration;
import io.gpupool.engine.placement.CycleState;
import io.gpupool.engine.placement.FilterPlugin;
import io.gpupool.engine.placement.ReplicaDemand;
import io.gpupool.engine.state.NodeState;
import io.gpupool.engine.status.Resource;
import io.gpupool.engine.status.Status;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The Kubernetes rules a secondary scheduler must keep besides GPUs, as an engine filter: the pod's
 * nodeSelector and required node affinity, and the node's NoSchedule / NoExecute taints against the pod's
 * tolerations (kube-scheduler's NodeAffinity and TaintToleration plugins, reduced to what decides
 * feasibility). Jobs without a pod here (none in tests of the engine) pass.
 */
final class KubeNodeFilter implements FilterPlugin {
    private final Map<String, Pod> podOfJob = new HashMap<>();
    private final Map<String, Node> nodes;

    KubeNodeFilter(Map<String, Node> nodes) {
        this.nodes = nodes;
    }

    void track(String jobId, Pod pod) { podOfJob.put(jobId, pod); }

    void untrack(String jobId) { podOfJob.remove(jobId); }

    void clear() { podOfJob.clear(); }

    static final String NAME = "kubernetes";

    @Override public String name() { return NAME; }

    /**
     * A node the pod's selector, affinity or tolerations rule out never takes it ({@code UNRESOLVABLE}, as
     * kube-scheduler's NodeAffinity and TaintToleration say): preempting pods there cannot help.
     */
    @Override
    public Status filter(CycleState cycle, ReplicaDemand demand, NodeState n) {
        Pod pod = podOfJob.get(cycle.job().id());
        Node node = nodes.get(n.name());
        if (pod == null || node == null) return null;
        String why = check(pod, node);
        return why == null ? null : Status.unresolvable(NAME, Resource.NONE, why);
    }

    /** Null when the pod may run on the node, else why not. */
    static String check(Pod pod, Node node) {
        Map<String, String> labels = node.getMetadata().getLabels() == null ? Map.of() : node.getMetadata().getLabels();
        Map<String, String> selector = pod.getSpec().getNodeSelector();
        if (selector != null) {
            for (var e : selector.entrySet()) {
                if (!e.getValue().equals(labels.get(e.getKey()))) return "node(s) didn't match Pod's node selector";
            }
        }
        var affinity = pod.getSpec().getAffinity();
        if (affinity != null && affinity.getNodeAffinity() != null
                && affinity.getNodeAffinity().getRequiredDuringSchedulingIgnoredDuringExecution() != null) {
            List<NodeSelectorTerm> terms = affinity.getNodeAffinity().getRequiredDuringSchedulingIgnoredDuringExecution().getNodeSelectorTerms();
            if (terms != null && !terms.isEmpty() && terms.stream().noneMatch(t -> matches(t, labels))) {
                return "node(s) didn't match Pod's node affinity";
            }
        }
        List<Taint> taints = node.getSpec() == null ? null : node.getSpec().getTaints();
        if (taints != null) {
            List<Toleration> tolerations = pod.getSpec().getTolerations() == null ? List.of() : pod.getSpec().getTolerations();
            for (Taint t : taints) {
                if ("PreferNoSchedule".equals(t.getEffect())) continue;
                if (tolerations.stream().noneMatch(tol -> tolerates(tol, t))) {
                    return "node(s) had untolerated taint {" + t.getKey() + (t.getValue() == null ? "" : ": " + t.getValue()) + "}";
                }
            }
        }
        return null;
    }

    private static boolean matches(NodeSelectorTerm term, Map<String, String> labels) {
        if (term.getMatchExpressions() == null) return true;
        for (NodeSelectorRequirement r : term.getMatchExpressions()) {
            String v = labels.get(r.getKey());
            List<String> values = r.getValues() == null ? List.of() : r.getValues();
            boolean ok = switch (r.getOperator()) {
                case "In" -> v != null && values.contains(v);
                case "NotIn" -> v == null || !values.contains(v);
                case "Exists" -> v != null;
                case "DoesNotExist" -> v == null;
                case "Gt", "Lt" -> v != null && values.size() == 1 && compare(v, values.getFirst(), r.getOperator());
                default -> false;
            };
            if (!ok) return false;
        }
        return true;
    }

    private static boolean compare(String label, String value, String op) {
        try {
            long a = Long.parseLong(label), b = Long.parseLong(value);
            return op.equals("Gt") ? a > b : a < b;
        } catch (NumberFormatException e) {
            return false;
        }
    }

    private static boolean tolerates(Toleration tol, Taint t) {
        if (tol.getEffect() != null && !tol.getEffect().isEmpty() && !tol.getEffect().equals(t.getEffect())) return false;
        if (tol.getKey() == null || tol.getKey().isEmpty()) return "Exists".equals(tol.getOperator());
        if (!tol.getKey().equals(t.getKey())) return false;
        if ("Exists".equals(tol.getOperator())) return true;
        return java.util.Objects.equals(tol.getValue() == null ? "" : tol.getValue(), t.getValue() == null ? "" : t.getValue());
    }
}
