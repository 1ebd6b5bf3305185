package io.gpupool.k8s;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpupool.engine.status.Status;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What the pods' owners are told and when: each pod's last message (the same message is not told twice), and
 * for a pod that waits, at most one report per {@link ClusterModel#WAIT_REPORT_INTERVAL_MS} (its reason changes
 * with every round). The reports wait here until the API side drains them.
 */
final class PodReports {
    private final Map<String, String> told = new HashMap<>();
    private final Map<String, Long> toldWaitingAt = new HashMap<>();
    private final List<ClusterModel.Report> pending = new ArrayList<>();

    /** Reports the pod's refusal as its status renders it; false when that is what the pod was last told. */
    boolean refusal(Pod pod, Status status) {
        return refusal(pod, status.message(), status);
    }

    /** Reports the pod's refusal, told as {@code message}; false when that is what the pod was last told. */
    boolean refusal(Pod pod, String message, Status status) {
        String key = Pods.key(pod);
        String text = "gpupool: " + message;
        if (text.equals(told.get(key))) return false;
        told.put(key, text);
        pending.add(new ClusterModel.Report(pod.getMetadata().getNamespace(), pod.getMetadata().getName(),
                pod.getMetadata().getUid(), text, status));
        return true;
    }

    /** The engine's reason a queued pod waits: at most one report per interval. */
    void waiting(Pod pod, String reason, Status status, long nowMs) {
        String key = Pods.key(pod);
        Long at = toldWaitingAt.get(key);
        if (at != null && nowMs - at < ClusterModel.WAIT_REPORT_INTERVAL_MS) return;
        if (refusal(pod, reason, status)) toldWaitingAt.put(key, nowMs);
    }

    /** The pods are bound: what this round said of them before is stale (it would mark a bound pod unschedulable). */
    void bound(Collection<String> keys) {
        pending.removeIf(r -> keys.contains(r.namespace() + "/" + r.name()));
        keys.forEach(told::remove);
    }

    /** The pod is gone. */
    void forget(String key) {
        told.remove(key);
        toldWaitingAt.remove(key);
    }

    /** The reports since the last call, in the order they were made. */
    List<ClusterModel.Report> drain() {
        List<ClusterModel.Report> out = List.copyOf(pending);
        pending.clear();
        return out;
    }
}
