package io.gpupool.engine.property;

import net.jqwik.api.Example;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.lifecycle.AroundPropertyHook;
import net.jqwik.api.lifecycle.PropagationMode;
import net.jqwik.api.lifecycle.PropertyExecutionResult;
import net.jqwik.api.lifecycle.PropertyExecutor;
import net.jqwik.api.lifecycle.PropertyLifecycleContext;

/**
 * How the engine's properties run (registered for every property through
 * {@code META-INF/services/net.jqwik.api.lifecycle.LifecycleHook}).
 *
 * <p>Normal build: every property runs with a fixed seed derived from its name, so CI is deterministic
 * (a failure reproduces on every machine) and never flaky. Soak: {@code -Dgpupool.soak.tries=N} gives
 * every property N tries with a random seed, to hunt for new counterexamples; {@code -Dgpupool.soak.seed=S}
 * with the same tries replays the seed a failing soak printed (the tries set jqwik's generation size too).
 * Shrinking is always bounded, so a failure never hangs the build. The command is in docs/architecture.md
 * ("Testing the engine").
 */
public final class PropertySeeds implements AroundPropertyHook {
    static final String TRIES = "gpupool.soak.tries";
    static final String SEED = "gpupool.soak.seed";

    @Override
    public PropagationMode propagateTo() {
        return PropagationMode.ALL_DESCENDANTS;
    }

    @Override
    public PropertyExecutionResult aroundProperty(PropertyLifecycleContext context, PropertyExecutor property) {
        var attributes = context.attributes();
        if (context.targetMethod().isAnnotationPresent(Example.class)) return property.execute();
        String soakTries = System.getProperty(TRIES, "");
        String soakSeed = System.getProperty(SEED, "");
        if (!soakTries.isBlank()) attributes.setTries(Integer.parseInt(soakTries.trim()));
        if (!soakSeed.isBlank()) {
            attributes.setSeed(soakSeed.trim());
        } else if (!soakTries.isBlank()) {
            attributes.setSeed("");   // random
        } else if (attributes.seed().filter(s -> !s.isBlank()).isEmpty()) {
            attributes.setSeed(fixedSeedOf(context.containerClass().getName() + "#" + context.targetMethod().getName()));
        }
        if (attributes.shrinking().orElse(ShrinkingMode.BOUNDED) == ShrinkingMode.FULL) attributes.setShrinking(ShrinkingMode.BOUNDED);
        return property.execute();
    }

    /** A stable seed per property: the same on every machine and every run. */
    static String fixedSeedOf(String propertyName) {
        long h = 1125899906842597L;
        for (int i = 0; i < propertyName.length(); i++) h = 31 * h + propertyName.charAt(i);
        return Long.toString(Math.abs(h % 1_000_000_007L));
    }

}
