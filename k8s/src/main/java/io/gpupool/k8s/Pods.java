package io.gpupool.k8s;

import io.fabric8.kubernetes.api.model.Pod;

import java.time.Instant;
import java.util.Map;

/** Small readings of a pod that every part of the module needs. */
public final class Pods {
    private Pods() {}

    public static String key(Pod p) {
        return p.getMetadata().getNamespace() + "/" + p.getMetadata().getName();
    }

    public static Map<String, String> annotations(Pod p) {
        Map<String, String> a = p.getMetadata().getAnnotations();
        return a == null ? Map.of() : a;
    }

    public static String nodeName(Pod p) {
        String n = p.getSpec() == null ? null : p.getSpec().getNodeName();
        return n == null || n.isEmpty() ? null : n;
    }

    /** Succeeded or Failed: the pod holds nothing any more. */
    public static boolean terminal(Pod p) {
        String phase = p.getStatus() == null ? null : p.getStatus().getPhase();
        return "Succeeded".equals(phase) || "Failed".equals(phase);
    }

    public static boolean deleting(Pod p) {
        return p.getMetadata().getDeletionTimestamp() != null;
    }

    /** Creation time in epoch ms (0 when the server did not set it). */
    public static long createdMs(Pod p) {
        String ts = p.getMetadata().getCreationTimestamp();
        if (ts == null || ts.isEmpty()) return 0;
        try {
            return Instant.parse(ts).toEpochMilli();
        } catch (RuntimeException e) {
            return 0;
        }
    }
}
