package io.gpupool.engine.config;

import io.gpupool.engine.TenantConfig;
import io.gpupool.engine.config.ConfigNode.Mapping;
import io.gpupool.engine.config.ConfigNode.Scalar;
import io.gpupool.engine.placement.PlacementConfig;
import io.gpupool.engine.placement.PlacementPlugins;
import io.gpupool.engine.policy.PolicyArgs;
import io.gpupool.engine.policy.PolicyRegistry;
import io.gpupool.engine.policy.PolicyTraits;
import io.gpupool.engine.policy.PolicyType;
import io.gpupool.model.SpecException;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * Reads a {@link PoolConfig} from a configuration tree (YAML file, JSON body, shorthand values) over a base: what the
 * tree gives replaces the base's, what it leaves out keeps the base's value, so one reader serves a whole file read
 * over the defaults and a partial change read over the configuration in force. Rules:
 * <ul>
 *   <li>{@code policy: NAME} or {@code policy: {name, args}}: a policy keeps its settings while its name stays, and
 *       starts from its own defaults when the name changes; {@code args} are that policy's settings (camelCase keys),
 *       checked by the policy ({@link PolicyType#parseArgs}).</li>
 *   <li>{@code placement: SHORTHAND} ({@link PlacementConfig#parse}) or {@code {scorers: {NAME: WEIGHT}, gpuPolicy,
 *       candidateLimit}}; given scorers replace all scorers; a scorer with no weight weighs 1; {@code gpuPolicy: null}
 *       is the first scorer's own.</li>
 *   <li>{@code tenants: {NAME: {weight, guaranteedGpus, limitGpus}}}: each named tenant is added or updated (its
 *       missing fields keep their values, or the defaults 1, 0, 0); a tree never removes a tenant.</li>
 *   <li>{@code predictor: NAME} or {@code {name}}; null is the driver's default.</li>
 *   <li>{@code defaultRuntime}: a duration ({@code 90s}, {@code 30m}, {@code 1h}, {@code 1d}) or a number of seconds.</li>
 * </ul>
 * Every error is a {@link ConfigException} with the path in the tree and, for YAML, the line.
 */
public final class PoolConfigReader {
    /** The tree's top-level keys. */
    public static final List<String> KEYS = List.of("policy", "placement", "tenants", "predictor", "defaultRuntime");
    private static final List<String> POLICY_KEYS = List.of("name", "args");
    private static final List<String> PLACEMENT_KEYS = List.of("scorers", "gpuPolicy", "candidateLimit");
    private static final List<String> TENANT_KEYS = List.of("weight", "guaranteedGpus", "limitGpus");
    private static final List<String> PREDICTOR_KEYS = List.of("name");

    private final List<String> policies;
    private final List<String> predictors;
    private final Predicate<String> tenantName;
    private final String tenantNameRule;

    private PoolConfigReader(List<String> policies, List<String> predictors, Predicate<String> tenantName, String tenantNameRule) {
        this.policies = policies;
        this.predictors = predictors;
        this.tenantName = tenantName;
        this.tenantNameRule = tenantNameRule;
    }

    /** Every registered policy; predictor names are not checked (the engine does not know them: the driver does). */
    public static PoolConfigReader standard() {
        return new PoolConfigReader(PolicyRegistry.names(), null, name -> !name.isBlank(), "a tenant name must not be empty");
    }

    /** Only the policies that need no true run times (a driver that runs real jobs has none to give). */
    public PoolConfigReader withoutOraclePolicies() {
        List<String> runnable = policies.stream()
                .filter(p -> !PolicyRegistry.create(p).traits().has(PolicyTraits.Trait.NEEDS_ORACLE)).toList();
        return new PoolConfigReader(runnable, predictors, tenantName, tenantNameRule);
    }

    /** The predictor names the driver knows; an empty list: the driver takes no predictor setting. */
    public PoolConfigReader predictors(Collection<String> names) {
        return new PoolConfigReader(policies, List.copyOf(names), tenantName, tenantNameRule);
    }

    /** The driver's rule for tenant names (the service's API names), said by {@code rule} when broken. */
    public PoolConfigReader tenantNames(Predicate<String> ok, String rule) {
        return new PoolConfigReader(policies, predictors, name -> !name.isBlank() && ok.test(name), rule);
    }

    /** The policy names this reader accepts. */
    public List<String> policies() {
        return policies;
    }

    /** YAML (or JSON) text; {@code source} (a file name) prefixes every error's line. */
    public PoolConfig readYaml(String text, String source, PoolConfig base) {
        return read(ConfigNode.parseYaml(text, source), base);
    }

    /** The tree over {@code base}. */
    public PoolConfig read(ConfigNode root, PoolConfig base) {
        Mapping m = root.mapping("").allowOnly("", KEYS);
        PoolConfig c = base;
        if (m.has("policy")) c = c.withPolicy(policy(m.get("policy"), base.policy()));
        if (m.has("placement")) c = c.withPlacement(placement(m.get("placement"), base.placement()));
        if (m.has("tenants")) c = c.withTenants(tenants(m.get("tenants"), base.tenants()));
        if (m.has("predictor")) c = c.withPredictor(predictor(m.get("predictor")));
        if (m.has("defaultRuntime")) c = c.withDefaultRuntimeMs(durationMs(m.get("defaultRuntime"), "defaultRuntime"));
        return c;
    }

    // ---- policy -----------------------------------------------------------------------------------

    private PoolConfig.Policy policy(ConfigNode n, PoolConfig.Policy base) {
        if (n instanceof Scalar) {
            String name = policyName(n, "policy");
            return name.equals(base.name()) ? base : PoolConfig.Policy.of(name);
        }
        Mapping m = n.mapping("policy").allowOnly("policy", POLICY_KEYS);
        String name = m.has("name") ? policyName(m.get("name"), "policy.name") : base.name();
        PolicyType<?> type = PolicyRegistry.type(name);
        PolicyArgs start = name.equals(base.name()) ? base.args() : type.defaults();
        if (!m.has("args")) return new PoolConfig.Policy(name, start);
        Mapping args = m.get("args").mapping("policy.args");
        Map<String, Object> merged = new LinkedHashMap<>(type.argsToMap(start));
        args.entries().forEach((k, v) -> {
            // the binder names unknown keys; known ones replace the start's value
            merged.put(k, v.plain());
        });
        try {
            return new PoolConfig.Policy(name, type.parseArgs(merged));
        } catch (SpecException e) {
            String field = e.field() == null ? "" : e.field();
            throw args.locate(field).error(field.isEmpty() ? "policy.args" : "policy.args." + field, e.rule());
        }
    }

    private String policyName(ConfigNode n, String path) {
        String name = n.text(path);
        if (policies.contains(name)) return name;
        String rule = PolicyRegistry.names().contains(name)
                ? "policy '" + name + "' is not available here (it needs true run times); available: " + String.join(", ", policies)
                : "unknown policy '" + name + "'; known: " + String.join(", ", policies);
        throw n.error(path, rule);
    }

    // ---- placement --------------------------------------------------------------------------------

    private static PlacementConfig placement(ConfigNode n, PlacementConfig base) {
        if (n instanceof Scalar) {
            String text = n.text("placement");
            try {
                return PlacementConfig.parse(text);
            } catch (SpecException e) {
                throw n.error("placement", e.getMessage());
            }
        }
        Mapping m = n.mapping("placement").allowOnly("placement", PLACEMENT_KEYS);
        Map<String, Double> scorers = base.scorerWeights();
        if (m.has("scorers")) scorers = scorers(m.get("scorers").mapping("placement.scorers"));
        String gpu = base.gpuPolicy();
        if (m.has("gpuPolicy")) {
            ConfigNode g = m.get("gpuPolicy");
            gpu = g.isNull() ? null : g.text("placement.gpuPolicy");
            if (gpu != null) {
                try {
                    PlacementPlugins.gpuPolicy(gpu);
                } catch (SpecException e) {
                    throw g.error("placement.gpuPolicy", e.rule());
                }
            }
        }
        int limit = m.has("candidateLimit")
                ? (int) m.get("candidateLimit").whole("placement.candidateLimit", 0, Integer.MAX_VALUE)
                : base.candidateLimit();
        return new PlacementConfig(scorers, gpu, limit);
    }

    private static Map<String, Double> scorers(Mapping s) {
        if (s.keys().isEmpty()) {
            throw s.error("placement.scorers", "at least one scorer is needed; known: " + String.join(", ", PlacementPlugins.scorerNames()));
        }
        Map<String, Double> out = new LinkedHashMap<>();
        for (String name : s.keys()) {
            String path = "placement.scorers." + name;
            try {
                PlacementPlugins.scorer(name);
            } catch (SpecException e) {
                throw new ConfigException(s.source(), s.keyLine(name), path, ConfigException.Kind.VALUE, e.rule());
            }
            ConfigNode w = s.get(name);
            double weight = w.isNull() ? 1.0 : w.number(path);
            if (!(weight > 0)) throw w.error(path, "weight must be > 0, got " + w.describe());
            out.put(name, weight);
        }
        return out;
    }

    // ---- tenants ----------------------------------------------------------------------------------

    private Map<String, TenantConfig> tenants(ConfigNode n, Map<String, TenantConfig> base) {
        if (n.isNull()) return base;   // "tenants:" with nothing under it
        Mapping m = n.mapping("tenants");
        Map<String, TenantConfig> out = new LinkedHashMap<>(base);
        for (String name : m.keys()) {
            String path = ConfigNode.child("tenants", name);
            ConfigNode entry = m.get(name);
            if (!tenantName.test(name)) throw new ConfigException(m.source(), m.keyLine(name), path, ConfigException.Kind.VALUE, tenantNameRule);
            Mapping t = entry.isNull() ? Mapping.empty(entry.source()) : entry.mapping(path).allowOnly(path, TENANT_KEYS);
            TenantConfig old = base.getOrDefault(name, TenantConfig.defaultFor(name));
            double weight = t.has("weight") ? t.get("weight").number(path + ".weight") : old.weight();
            double guaranteed = t.has("guaranteedGpus") ? t.get("guaranteedGpus").number(path + ".guaranteedGpus") : old.guaranteedGpus();
            double limit = t.has("limitGpus") ? t.get("limitGpus").number(path + ".limitGpus") : old.limitGpus();
            try {
                out.put(name, new TenantConfig(name, weight, guaranteed, limit));
            } catch (SpecException e) {
                // TenantConfig names the cluster file's snake_case fields; the tree's are camelCase
                String key = switch (e.field() == null ? "" : e.field()) {
                    case "weight" -> "weight";
                    case "guaranteed_gpus" -> "guaranteedGpus";
                    case "limit_gpus" -> "limitGpus";
                    default -> null;
                };
                ConfigNode at = key != null && t.has(key) ? t.get(key) : entry;
                throw at.error(key == null ? path : path + "." + key, e.rule());
            }
        }
        return out;
    }

    // ---- predictor, durations ---------------------------------------------------------------------

    private PoolConfig.Predictor predictor(ConfigNode n) {
        if (n.isNull()) return null;
        ConfigNode nameNode = n;
        String path = "predictor";
        if (!(n instanceof Scalar)) {
            Mapping m = n.mapping("predictor").allowOnly("predictor", PREDICTOR_KEYS);
            if (!m.has("name")) throw m.error("predictor.name", "is required");
            nameNode = m.get("name");
            path = "predictor.name";
            if (nameNode.isNull()) return null;
        }
        String name = nameNode.text(path);
        if (predictors != null && !predictors.contains(name)) {
            throw nameNode.error(path, predictors.isEmpty() ? "this driver has no run-time predictor to choose"
                    : "unknown predictor '" + name + "'; known: " + String.join(", ", predictors));
        }
        return new PoolConfig.Predictor(name);
    }

    /** A duration text, or a number of seconds. */
    static long durationMs(ConfigNode n, String path) {
        if (n instanceof Scalar s && s.value() instanceof Number) {
            double sec = n.number(path);
            if (!(sec > 0) || sec > Long.MAX_VALUE / 4000.0 || Math.round(sec * 1000) <= 0) {
                throw n.error(path, "must be a positive number of seconds, got " + n.describe());
            }
            return Math.round(sec * 1000);
        }
        String text = n.text(path);
        long ms = Durations.parseMs(text);
        if (ms < 0) throw n.error(path, Durations.rule(text));
        return ms;
    }
}
