package io.gpupool.engine.policy;

import io.gpupool.model.SpecException;

import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * One registered policy: its name, its settings type with their defaults, and how to make one. A policy's
 * settings are read from a map of camelCase keys ({@link #parseArgs}) and written back ({@link #argsToMap}), so a
 * configuration file, a JSON body and the command line all give them the same way.
 *
 * @param <A> the policy's settings record ({@link PolicyArgs.None} when it has none)
 */
public final class PolicyType<A extends Record & PolicyArgs> {
    private final String name;
    private final A defaults;
    private final Function<A, QueuePolicy> factory;

    PolicyType(String name, A defaults, Function<A, QueuePolicy> factory) {
        this.name = name;
        this.defaults = defaults;
        this.factory = factory;
    }

    public String name() { return name; }

    /** The settings a policy of this type gets when none are given. */
    public A defaults() { return defaults; }

    @SuppressWarnings("unchecked")
    public Class<A> argsType() { return (Class<A>) defaults.getClass(); }

    /** The setting names, in the order of the record (empty when the policy has none). */
    public List<String> argNames() {
        return List.copyOf(argsToMap(defaults).keySet());
    }

    /**
     * The defaults with the given settings replaced, e.g. {@code {"agingPerHour": 2}} for {@code priority}. Numbers
     * may be given as numbers or text, lists as lists or comma-separated text. Unknown keys, values of the wrong
     * kind and values the policy refuses are {@link SpecException}s naming the key.
     */
    public A parseArgs(Map<String, ?> values) {
        return ArgsBinder.bind("policy " + name, defaults, values);
    }

    /** The settings as a map of camelCase keys to values, the inverse of {@link #parseArgs}. */
    public Map<String, Object> argsToMap(PolicyArgs args) {
        return ArgsBinder.toMap(requireArgs(args));
    }

    /** The settings as this type's record; a {@link SpecException} when they are another policy's. */
    public A requireArgs(PolicyArgs args) {
        if (!argsType().isInstance(args)) {
            throw new SpecException("policy " + name, "args", "takes " + argsType().getSimpleName() + " settings, got "
                    + (args == null ? "none" : args.getClass().getName()));
        }
        return argsType().cast(args);
    }

    /** A new policy with these settings, checked against its declared traits. */
    public QueuePolicy create(PolicyArgs args) {
        QueuePolicy p = factory.apply(requireArgs(args));
        PolicyTraits.check(p);
        return p;
    }
}
