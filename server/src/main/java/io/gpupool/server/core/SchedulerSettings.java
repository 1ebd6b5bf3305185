package io.gpupool.server.core;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gpupool.engine.SchedulerConfig;
import io.gpupool.engine.TenantConfig;
import io.gpupool.engine.config.PoolConfig;
import io.gpupool.engine.config.PoolConfigWriter;
import io.gpupool.store.TenantRow;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The scheduler configuration in force in the service: the configuration tree (docs/configuration.md) less its
 * tenants, which the service keeps in the store's tenant table and shows beside it ({@link #toTree}). The predictor
 * is the one the service started with (--predictor or the --config file); it is shown, not stored. Stored as the
 * tree's JSON under the setting 'scheduler'; a store written before the tree holds the flat fields (policy,
 * placement, agingPerHour, ...), which read as shorthands ({@link ConfigChange}).
 */
public record SchedulerSettings(PoolConfig tree) {
    private static final ObjectMapper JSON = new ObjectMapper();

    public SchedulerSettings {
        if (!tree.tenants().isEmpty()) tree = tree.withTenants(Map.of());
    }

    /** The policy with its defaults, the default placement, the default predictor. */
    public static SchedulerSettings defaults(String policy) {
        return new SchedulerSettings(PoolConfig.defaults(policy).withPredictor(new PoolConfig.Predictor(RuntimeLearning.DEFAULT_KIND)));
    }

    /** The policy's name (the pool snapshot shows it). */
    public String policy() { return tree.policy().name(); }

    /** The placement as its shorthand (the pool snapshot shows it). */
    public String placement() { return tree.placement().shorthand(); }

    /** The predictor the service runs. */
    public String predictor() { return tree.predictorOr(RuntimeLearning.DEFAULT_KIND); }

    public SchedulerSettings withPredictor(String name) {
        return new SchedulerSettings(tree.withPredictor(new PoolConfig.Predictor(name)));
    }

    /** The engine's configuration with these tenants. */
    public SchedulerConfig toConfig(Map<String, TenantConfig> tenants) {
        return tree.withTenants(tenants).toSchedulerConfig();
    }

    /** The whole tree in force, with the store's tenants: what GET /api/v1/config answers. */
    public Map<String, Object> toTree(Collection<TenantRow> tenants) {
        return PoolConfigWriter.toMap(tree.withTenants(tenantConfigs(tenants)));
    }

    /** The engine's tenant configurations of the store's tenants. */
    public static Map<String, TenantConfig> tenantConfigs(Collection<TenantRow> rows) {
        Map<String, TenantConfig> out = new LinkedHashMap<>();
        for (TenantRow t : rows) out.put(t.name(), new TenantConfig(t.name(), t.weight(), t.guaranteedGpus(), t.limitGpus()));
        return out;
    }

    /** The stored form: the tree without tenants (stored as tenants) and predictor (chosen at start). */
    public String toJson() {
        Map<String, Object> m = PoolConfigWriter.toMap(tree);
        m.remove("tenants");
        m.remove("predictor");
        try {
            return JSON.writeValueAsString(m);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("the configuration tree cannot be written as JSON", e);
        }
    }

    /** The stored form (either version) over {@code base}; a store that holds no valid configuration stops the start. */
    public static SchedulerSettings fromJson(String json, SchedulerSettings base) {
        try {
            return ConfigChange.fromBody(JSON.readTree(json), "stored configuration", base, Map.of(), false).settings();
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("stored scheduler settings are not JSON: " + e.getOriginalMessage());
        } catch (ServiceException e) {
            throw new IllegalStateException("stored scheduler settings are not valid: " + e.getMessage());
        }
    }
}
