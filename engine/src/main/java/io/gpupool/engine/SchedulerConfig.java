package io.gpupool.engine;

import io.gpupool.engine.placement.PlacementConfig;
import io.gpupool.engine.policy.PolicyArgs;
import io.gpupool.engine.policy.PolicyRegistry;
import io.gpupool.engine.policy.PolicyType;
import io.gpupool.model.SpecException;

import java.util.Map;

/**
 * Every knob of the engine in one place.
 *
 * @param policy           queue policy name (see {@link PolicyRegistry})
 * @param policyArgs       the policy's own settings (its {@link PolicyType#argsType()}; null = its defaults)
 * @param placement        node scorers, GPU policy, candidate sample size
 * @param tenants          weights, guarantees and limits; unknown tenants get weight 1, no quota
 * @param defaultRuntimeMs run time the built-in predictor assumes for a job with no estimate and no history
 */
public record SchedulerConfig(
        String policy,
        PolicyArgs policyArgs,
        PlacementConfig placement,
        Map<String, TenantConfig> tenants,
        long defaultRuntimeMs) {

    public static final long DEFAULT_RUNTIME_MS = 3_600_000L;

    public SchedulerConfig {
        PolicyType<?> type = PolicyRegistry.type(policy);
        policyArgs = policyArgs == null ? type.defaults() : type.requireArgs(policyArgs);
        if (placement == null) placement = PlacementConfig.defaults();
        tenants = Map.copyOf(tenants);
        if (defaultRuntimeMs <= 0) throw new SpecException("scheduler", "defaultRuntimeMs", "must be > 0");
    }

    /** The policy with its default settings, the default placement, no tenants. */
    public static SchedulerConfig defaults(String policy) {
        return new SchedulerConfig(policy, null, PlacementConfig.defaults(), Map.of(), DEFAULT_RUNTIME_MS);
    }

    /** Another policy, with its default settings. */
    public SchedulerConfig withPolicy(String p) {
        return new SchedulerConfig(p, null, placement, tenants, defaultRuntimeMs);
    }

    /** The policy's settings, e.g. {@code new PriorityAgingPolicy.Args(2, 200)}. */
    public SchedulerConfig withPolicyArgs(PolicyArgs args) {
        return new SchedulerConfig(policy, args, placement, tenants, defaultRuntimeMs);
    }

    /** The policy's defaults with these settings replaced ({@link PolicyType#parseArgs}), e.g. {@code {"agingPerHour": 2}}. */
    public SchedulerConfig withPolicyArgs(Map<String, ?> args) {
        return withPolicyArgs(PolicyRegistry.type(policy).parseArgs(args));
    }

    public SchedulerConfig withPlacement(PlacementConfig p) {
        return new SchedulerConfig(policy, policyArgs, p, tenants, defaultRuntimeMs);
    }

    public SchedulerConfig withTenants(Map<String, TenantConfig> t) {
        return new SchedulerConfig(policy, policyArgs, placement, t, defaultRuntimeMs);
    }

    public SchedulerConfig withDefaultRuntimeMs(long ms) {
        return new SchedulerConfig(policy, policyArgs, placement, tenants, ms);
    }
}
