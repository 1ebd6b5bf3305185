package io.gpupool.engine.policy;

import io.gpupool.model.SpecException;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/** Queue policies by name (the names of DESIGN.md). A new policy is one class plus one line here. */
public final class PolicyRegistry {
    private static final Map<String, Supplier<QueuePolicy>> POLICIES = new LinkedHashMap<>();

    static {
        POLICIES.put("fcfs", FcfsPolicy::new);
        POLICIES.put("fcfs-backfill", FcfsBackfillPolicy::new);
        POLICIES.put("priority", PriorityAgingPolicy::new);
        POLICIES.put("fair-share", FairSharePolicy::new);
        POLICIES.put("qssf", QssfPolicy::new);
        POLICIES.put("las", LasPolicy::new);
        POLICIES.put("srtf-oracle", SrtfOraclePolicy::new);
    }

    private PolicyRegistry() {}

    public static QueuePolicy create(String name) {
        requireKnown(name);
        QueuePolicy p = POLICIES.get(name).get();
        PolicyTraits.check(p);
        return p;
    }

    public static void requireKnown(String name) {
        if (name == null || !POLICIES.containsKey(name)) {
            throw new SpecException("scheduler", "policy", "unknown policy '" + name + "'; known: " + String.join(", ", POLICIES.keySet()));
        }
    }

    public static List<String> names() {
        return List.copyOf(POLICIES.keySet());
    }
}
