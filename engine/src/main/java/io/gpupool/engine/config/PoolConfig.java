package io.gpupool.engine.config;

import io.gpupool.engine.SchedulerConfig;
import io.gpupool.engine.TenantConfig;
import io.gpupool.engine.placement.PlacementConfig;
import io.gpupool.engine.policy.PolicyArgs;
import io.gpupool.engine.policy.PolicyRegistry;
import io.gpupool.engine.policy.PolicyType;
import io.gpupool.model.SpecException;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The configuration tree that the simulator, the service and the Kubernetes drivers all read (docs/configuration.md):
 * <pre>
 * policy:         {name: las, args: {thresholdsGpuSec: [3600, 36000]}}   # or the shorthand  policy: las
 * placement:      {scorers: {binpack: 1, topology: 1}, gpuPolicy: null, candidateLimit: 32}
 *                                                                          # or  placement: binpack,topology;limit=32
 * tenants:        {vision: {weight: 2, guaranteedGpus: 8, limitGpus: 16}}
 * predictor:      {name: history}                                        # or  predictor: history; absent: the driver's
 * defaultRuntime: 1h
 * </pre>
 * Each part is checked by the plugin it configures: the policy's arguments by the policy's own settings record
 * ({@link PolicyType#parseArgs}), scorer and GPU policy names by the placement registry, tenants by
 * {@link TenantConfig}. {@link PoolConfigReader} reads it from YAML or JSON, {@link PoolConfigWriter} writes it back.
 *
 * @param policy           queue policy and its settings
 * @param placement        node scorers with weights, GPU policy, candidate sample size
 * @param tenants          tenant name -> entitlement (the key is the tenant's name)
 * @param predictor        run-time predictor; null = the driver's default (the simulator: the engine's built-in
 *                         history median; the service: history)
 * @param defaultRuntimeMs run time assumed for a job with no estimate and no history
 */
public record PoolConfig(Policy policy, PlacementConfig placement, Map<String, TenantConfig> tenants, Predictor predictor,
                         long defaultRuntimeMs) {

    /**
     * A policy with its own settings.
     *
     * @param name registered policy name ({@link PolicyRegistry})
     * @param args its settings record; null = its defaults
     */
    public record Policy(String name, PolicyArgs args) {
        public Policy {
            PolicyType<?> type = PolicyRegistry.type(name);
            args = args == null ? type.defaults() : type.requireArgs(args);
        }

        public static Policy of(String name) {
            return new Policy(name, null);
        }

        /** The settings as camelCase keys to values, as the tree writes them. */
        public Map<String, Object> argsMap() {
            return PolicyRegistry.type(name).argsToMap(args);
        }
    }

    /** @param name a run-time predictor name the driver knows (history, gbt, global-median, none) */
    public record Predictor(String name) {
        public Predictor {
            if (name == null || name.isBlank()) throw new SpecException("predictor", "name", "must not be empty");
        }
    }

    public PoolConfig {
        Objects.requireNonNull(policy, "policy");
        Objects.requireNonNull(placement, "placement");
        for (var e : tenants.entrySet()) {
            if (!e.getKey().equals(e.getValue().name())) {
                throw new IllegalArgumentException("tenant key '" + e.getKey() + "' names tenant '" + e.getValue().name() + "'");
            }
        }
        tenants = Collections.unmodifiableMap(new LinkedHashMap<>(tenants));
        if (defaultRuntimeMs <= 0) throw new SpecException("config", "defaultRuntime", "must be > 0");
    }

    /** The policy with its defaults, the default placement, no tenants, the driver's predictor, 1 h default run time. */
    public static PoolConfig defaults(String policy) {
        return of(SchedulerConfig.defaults(policy), null);
    }

    /** The tree of an engine configuration (tenants by name), with a predictor (null: the driver's default). */
    public static PoolConfig of(SchedulerConfig c, Predictor predictor) {
        return new PoolConfig(new Policy(c.policy(), c.policyArgs()), c.placement(), new TreeMap<>(c.tenants()), predictor, c.defaultRuntimeMs());
    }

    /** What the engine runs: everything but the predictor, which the driver installs. */
    public SchedulerConfig toSchedulerConfig() {
        return new SchedulerConfig(policy.name(), policy.args(), placement, tenants, defaultRuntimeMs);
    }

    /**
     * The {@code --policy NAME} shorthand: that policy, keeping its settings when it is the policy already
     * configured, else with its defaults.
     */
    public PoolConfig withPolicy(String name) {
        return withPolicy(name.equals(policy.name()) ? policy : Policy.of(name));
    }

    public PoolConfig withPolicy(Policy p) {
        return new PoolConfig(p, placement, tenants, predictor, defaultRuntimeMs);
    }

    public PoolConfig withPlacement(PlacementConfig p) {
        return new PoolConfig(policy, p, tenants, predictor, defaultRuntimeMs);
    }

    public PoolConfig withTenants(Map<String, TenantConfig> t) {
        return new PoolConfig(policy, placement, t, predictor, defaultRuntimeMs);
    }

    /** @param p the predictor; null = the driver's default */
    public PoolConfig withPredictor(Predictor p) {
        return new PoolConfig(policy, placement, tenants, p, defaultRuntimeMs);
    }

    public PoolConfig withDefaultRuntimeMs(long ms) {
        return new PoolConfig(policy, placement, tenants, predictor, ms);
    }

    /** The predictor's name, or {@code fallback} when the tree leaves it to the driver. */
    public String predictorOr(String fallback) {
        return predictor == null ? fallback : predictor.name();
    }
}
