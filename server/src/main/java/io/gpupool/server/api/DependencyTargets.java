package io.gpupool.server.api;

import io.gpupool.server.auth.Principal;
import io.gpupool.server.core.Dependency;
import io.gpupool.server.core.ServiceException;
import io.gpupool.store.JobRow;
import io.gpupool.store.Store;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The jobs and arrays a dependency names, as the store has them: each must exist and be visible to the caller (a
 * member's own tenant), else the submission is refused naming it.
 */
final class DependencyTargets {
    private DependencyTargets() {}

    static Map<String, Dependency.Target> resolve(Dependency d, Principal p, Store store) {
        Map<String, Dependency.Target> known = new LinkedHashMap<>();
        for (String t : d.targets()) {
            JobRow row = store.job(t).orElse(null);
            if (row != null && p.sees(row.tenant())) {
                known.put(t, new Dependency.Target(row.active() ? null : row.state(), false));
                continue;
            }
            List<JobRow> first = row == null ? store.arrayTasks(t, 0, 1) : List.of();
            if (first.isEmpty() || !p.sees(first.getFirst().tenant())) {
                throw ServiceException.invalid(Dependency.FIELD, "unknown job '" + t + "'");
            }
            Map<String, Long> states = store.arrayStates(t);
            long active = states.getOrDefault("PENDING", 0L) + states.getOrDefault("RUNNING", 0L);
            long all = states.values().stream().mapToLong(Long::longValue).sum();
            boolean notOk = all - active - states.getOrDefault("SUCCEEDED", 0L) > 0;
            known.put(t, new Dependency.Target(active > 0 ? null : notOk ? "FAILED" : "SUCCEEDED", notOk));
        }
        return known;
    }
}
