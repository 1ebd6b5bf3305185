package io.gpupool.engine.policy;

import io.gpupool.model.SpecException;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;

/** Queue policies by name. A new policy is one class plus one line here: its name, its factory, its settings' defaults. */
public final class PolicyRegistry {
    private static final Map<String, PolicyType<?>> POLICIES = new LinkedHashMap<>();

    static {
        register("fcfs", FcfsPolicy::new);
        register("fcfs-backfill", FcfsBackfillPolicy::new, BackfillArgs.DEFAULTS);
        register("priority", PriorityAgingPolicy::new, PriorityAgingPolicy.Args.DEFAULTS);
        register("fair-share", FairSharePolicy::new, FairSharePolicy.Args.DEFAULTS);
        register("qssf", QssfPolicy::new);
        register("las", LasPolicy::new, LasPolicy.Args.DEFAULTS);
        register("srtf-oracle", SrtfOraclePolicy::new);
        register("themis", ThemisPolicy::new, BackfillArgs.DEFAULTS);
        register("gittins", GittinsPolicy::new, GittinsPolicy.Args.DEFAULTS);
    }

    private PolicyRegistry() {}

    private static <A extends Record & PolicyArgs> void register(String name, Function<A, QueuePolicy> factory, A defaults) {
        POLICIES.put(name, new PolicyType<>(name, defaults, factory));
    }

    private static void register(String name, Supplier<QueuePolicy> factory) {
        register(name, (PolicyArgs.None none) -> factory.get(), PolicyArgs.None.INSTANCE);
    }

    /** The registration of a policy; a {@link SpecException} naming the known ones when there is none. */
    public static PolicyType<?> type(String name) {
        requireKnown(name);
        return POLICIES.get(name);
    }

    /** A new policy with its default settings. */
    public static QueuePolicy create(String name) {
        return type(name).create(type(name).defaults());
    }

    /** A new policy with these settings (of its own settings type). */
    public static QueuePolicy create(String name, PolicyArgs args) {
        return type(name).create(args);
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
