package io.gpupool.server.core;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gpupool.engine.TenantConfig;
import io.gpupool.engine.config.ConfigException;
import io.gpupool.engine.config.ConfigNode;
import io.gpupool.engine.config.ConfigNode.Mapping;
import io.gpupool.engine.config.ConfigNode.Scalar;
import io.gpupool.engine.config.PoolConfig;
import io.gpupool.engine.config.PoolConfigReader;
import io.gpupool.engine.policy.PolicyRegistry;
import io.gpupool.predict.runtime.Predictors;
import io.gpupool.store.TenantRow;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * A change of the service's configuration tree (docs/configuration.md), from a PUT /api/v1/config body or the
 * --config file, checked in full before anything is applied:
 * <ul>
 *   <li>The body is the tree, whole or partial, read over the configuration in force: what it leaves out stays.</li>
 *   <li>The flat fields of the settings before the tree are shorthands: {@code agingPerHour}, {@code backfillDepth}
 *       and {@code fairShareHalfLifeSec} set those settings of the policy in force after the change where it has
 *       them (and are ignored where it has not, as they always had no effect there); {@code defaultRuntimeSec} sets
 *       {@code defaultRuntime}.</li>
 *   <li>Tenants the tree names are created, or updated, as POST /api/v1/tenants and PUT /api/v1/tenants/{name} would
 *       (a new tenant's jobs run on own-account nodes only; an updated one keeps that setting); tenants it does not
 *       name stay: a configuration never removes a tenant, whose jobs and tokens would go with it.</li>
 *   <li>The predictor is chosen at start; a PUT may name the running one, not another.</li>
 * </ul>
 *
 * @param settings the settings in force after the change
 * @param tenants  the tenants to create or update, with their new entitlements
 */
public record ConfigChange(SchedulerSettings settings, List<TenantConfig> tenants) {
    private static final Set<String> FLAT_FIELDS = Set.of("agingPerHour", "fairShareHalfLifeSec", "backfillDepth", "defaultRuntimeSec");
    private static final long YEAR_SEC = 365L * 24 * 3600;
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The service's reader: no oracle policies, the predictors it can run, the API's tenant names. */
    public static final PoolConfigReader READER = PoolConfigReader.standard().withoutOraclePolicies().predictors(Predictors.schedulingNames())
            .tenantNames(n -> Fields.NAME.matcher(n).matches(), "must be 1-64 lowercase letters, digits or '-', starting and ending with a letter or digit");

    public ConfigChange {
        tenants = List.copyOf(tenants);
    }

    /**
     * A PUT body (or the stored settings) over the settings in force and the store's tenants.
     *
     * @param source         what the body is, for errors ("request body")
     * @param predictorFixed whether the predictor is the running one, which the body may name but not change
     */
    public static ConfigChange fromBody(JsonNode body, String source, SchedulerSettings current, Map<String, TenantRow> tenants,
                                        boolean predictorFixed) {
        if (body == null || !body.isObject()) throw ServiceException.malformed("body", "must be a JSON object");
        ObjectNode tree = ((ObjectNode) body).deepCopy();
        ObjectNode flat = JsonNodeFactory.instance.objectNode();
        for (String f : FLAT_FIELDS) if (tree.has(f)) flat.set(f, tree.remove(f));
        @SuppressWarnings("unchecked")
        Map<String, Object> plain = JSON.convertValue(tree, Map.class);
        PoolConfig next;
        try {
            Mapping root = withFlatFields(ConfigNode.of(plain, source).mapping(""), Fields.of(flat, "", FLAT_FIELDS), policyAfter(tree, current), source);
            next = READER.read(root, current.tree().withTenants(SchedulerSettings.tenantConfigs(tenants.values())));
        } catch (ConfigException e) {
            throw toServiceException(e);
        }
        if (predictorFixed && !next.predictorOr(RuntimeLearning.DEFAULT_KIND).equals(current.predictor())) {
            throw ServiceException.invalid("predictor", "the service runs the predictor '" + current.predictor()
                    + "', chosen at start (--predictor or the --config file); a restart with another changes it");
        }
        return of(next.withPredictor(new PoolConfig.Predictor(predictorFixed ? current.predictor() : next.predictorOr(RuntimeLearning.DEFAULT_KIND))),
                tenants);
    }

    /**
     * The --config file's tree (already read over the defaults: the file, not the saved settings, is what runs after
     * a start with it) against the store's tenants.
     */
    public static ConfigChange fromFile(PoolConfig fileTree, Map<String, TenantRow> tenants) {
        return of(fileTree, tenants);
    }

    /** A new tree and the tenants it names that differ from the store's; tenants checked against the API's limits. */
    private static ConfigChange of(PoolConfig next, Map<String, TenantRow> current) {
        List<TenantConfig> changed = new ArrayList<>();
        for (TenantConfig t : next.tenants().values()) {
            TenantRow old = current.get(t.name());
            if (old != null && old.weight() == t.weight() && old.guaranteedGpus() == t.guaranteedGpus() && old.limitGpus() == t.limitGpus()) continue;
            String at = "tenants." + t.name();
            // the bounds of the tenant routes (AdminRoutes), so that both ways give the same tenants
            range(at + ".weight", t.weight(), 1e-6, 1e6);
            range(at + ".guaranteedGpus", t.guaranteedGpus(), 0, 1e6);
            range(at + ".limitGpus", t.limitGpus(), 0, 1e6);
            changed.add(t);
        }
        return new ConfigChange(new SchedulerSettings(next), changed);
    }

    private static void range(String path, double v, double min, double max) {
        if (!(v >= min && v <= max)) throw ServiceException.invalid(path, "must be in " + min + ".." + max + ", got " + v);
    }

    /** Creates or updates the tenants, then applies the settings; completes with the settings in force once durable. */
    public CompletableFuture<SchedulerSettings> applyTo(PoolService pool, Map<String, TenantRow> existing) {
        CompletableFuture<?> done = CompletableFuture.completedFuture(null);
        for (TenantConfig t : tenants) {
            TenantRow old = existing.get(t.name());
            done = done.thenCompose(v -> pool.putTenant(t.name(), t.weight(), t.guaranteedGpus(), t.limitGpus(),
                    old != null && old.sharedAccountNodes(), old == null ? 0 : old.defaultTimeLimitSec(), old == null ? 0 : old.maxTimeLimitSec(),
                    old == null));
        }
        return done.thenCompose(v -> pool.reconfigure(settings));
    }

    /** Tenants by name. */
    public static Map<String, TenantRow> byName(List<TenantRow> rows) {
        Map<String, TenantRow> out = new LinkedHashMap<>();
        for (TenantRow t : rows) out.put(t.name(), t);
        return out;
    }

    /** A wrong form is the request's syntax (400), a bad value its content (422), as for every other body. */
    static ServiceException toServiceException(ConfigException e) {
        String field = e.path().isEmpty() ? "body" : e.path();
        return e.kind() == ConfigException.Kind.SHAPE ? ServiceException.malformed(field, e.rule()) : ServiceException.invalid(field, e.rule());
    }

    // ---- the flat fields --------------------------------------------------------------------------

    /** The policy the change leaves in force (the flat fields set its settings). */
    private static String policyAfter(ObjectNode tree, SchedulerSettings current) {
        JsonNode p = tree.get("policy");
        if (p != null && p.isTextual()) return p.textValue();
        if (p != null && p.isObject() && p.path("name").isTextual()) return p.path("name").textValue();
        return current.policy();
    }

    /** The flat fields, checked with their old bounds, moved into the tree. */
    private static Mapping withFlatFields(Mapping root, Fields flat, String policy, String source) {
        Map<String, Object> args = new LinkedHashMap<>();
        if (flat.has("agingPerHour")) args.put("agingPerHour", flat.number("agingPerHour", 0, 0, 1e6));
        if (flat.has("backfillDepth")) args.put("backfillDepth", flat.integer("backfillDepth", 0, 1, 100_000));
        if (flat.has("fairShareHalfLifeSec")) args.put("halfLifeMs", flat.integer("fairShareHalfLifeSec", 0, 0, YEAR_SEC) * 1000);
        Long runtimeSec = flat.has("defaultRuntimeSec") ? flat.integer("defaultRuntimeSec", 0, 1, YEAR_SEC) : null;
        // an unknown policy is the reader's to report, with its path
        if (PolicyRegistry.names().contains(policy)) args.keySet().retainAll(PolicyRegistry.type(policy).argNames());
        else args.clear();
        if (!args.isEmpty()) root = withPolicyArgs(root, args, source);
        if (runtimeSec != null) {
            if (root.has("defaultRuntime")) throw ServiceException.invalid("defaultRuntimeSec", "is given also as defaultRuntime; give one");
            root = root.with("defaultRuntime", new Scalar(runtimeSec, source, 0));
        }
        return root;
    }

    private static Mapping withPolicyArgs(Mapping root, Map<String, Object> flatArgs, String source) {
        ConfigNode p = root.get("policy");
        Mapping policy;
        if (p == null) policy = Mapping.empty(source);
        else if (p instanceof Scalar) policy = Mapping.empty(source).with("name", p);
        else if (p instanceof Mapping m) policy = m;
        else return root;   // a wrong form: the reader reports it
        ConfigNode a = policy.get("args");
        if (a != null && !(a instanceof Mapping)) return root;
        Mapping args = a == null ? Mapping.empty(source) : (Mapping) a;
        for (var e : flatArgs.entrySet()) {
            if (args.has(e.getKey())) {
                throw ServiceException.invalid(flatName(e.getKey()), "is given also as policy.args." + e.getKey() + "; give one");
            }
            args = args.with(e.getKey(), new Scalar(e.getValue(), source, 0));
        }
        return root.with("policy", policy.with("args", args));
    }

    private static String flatName(String arg) {
        return arg.equals("halfLifeMs") ? "fairShareHalfLifeSec" : arg;
    }
}
