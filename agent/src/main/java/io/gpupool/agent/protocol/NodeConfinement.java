package io.gpupool.agent.protocol;

import java.util.List;

/**
 * What a node enforces on its jobs, as its agent found it at start: logged, sent with the registration, shown by the
 * node API and {@code gpupool nodes}. A node that lacks a controller says which, so an operator knows what a job there
 * could do to its neighbours.
 *
 * @param mode     the cgroup layout: "v2", "v1", "hybrid", or "none" (jobs run unconfined, as plain process groups)
 * @param enforced what holds, e.g. {@code cpu(v1)}, {@code memory(v1)}, {@code swap(v1)}, {@code pids(v1)},
 *                 {@code devices(v1)}, {@code devices(bpf)}, {@code kill(cgroup.kill)} or {@code kill(freezer)}
 * @param missing  what does not, each with the reason, e.g. {@code "cpu: no cgroup hierarchy has the cpu controller"}
 * @param reason   for mode "none": why (not root, no cgroup file system, turned off); else null
 */
public record NodeConfinement(String mode, List<String> enforced, List<String> missing, String reason) {

    public NodeConfinement {
        enforced = enforced == null ? List.of() : List.copyOf(enforced);
        missing = missing == null ? List.of() : List.copyOf(missing);
    }

    public static NodeConfinement none(String reason) {
        return new NodeConfinement("none", List.of(), List.of(), reason);
    }

    /** One line for a log and a table: "hybrid: cpu(v1) memory(v1) ... ; missing: swap" or "none (not root)". */
    public String summary() {
        if ("none".equals(mode)) return "none" + (reason == null ? "" : " (" + reason + ")");
        StringBuilder b = new StringBuilder(mode).append(": ").append(String.join(" ", enforced));
        if (!missing.isEmpty()) {
            b.append("; missing: ").append(String.join(", ", missing.stream().map(m -> m.contains(":") ? m.substring(0, m.indexOf(':')) : m).toList()));
        }
        return b.toString();
    }

    @Override
    public String toString() {
        if ("none".equals(mode)) return summary();
        return "cgroup " + mode + "; enforced: " + String.join(", ", enforced) + (missing.isEmpty() ? "" : "; missing: " + String.join("; ", missing));
    }
}
