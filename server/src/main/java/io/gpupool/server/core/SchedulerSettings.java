package io.gpupool.server.core;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gpupool.engine.SchedulerConfig;
import io.gpupool.engine.TenantConfig;
import io.gpupool.engine.placement.PlacementConfig;
import io.gpupool.engine.policy.FairSharePolicy;
import io.gpupool.engine.policy.PolicyArgs;
import io.gpupool.engine.policy.PolicyRegistry;
import io.gpupool.engine.policy.PolicyType;
import io.gpupool.engine.policy.PriorityAgingPolicy;
import io.gpupool.model.SpecException;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The scheduler configuration an admin may change at run time (GET/PUT /api/v1/config). Validated in full
 * before anything is applied; stored as JSON under the setting 'scheduler'.
 */
public record SchedulerSettings(String policy, String placement, double agingPerHour, long fairShareHalfLifeSec,
                                int backfillDepth, long defaultRuntimeSec) {
    public static final Set<String> FIELDS = Set.of("policy", "placement", "agingPerHour", "fairShareHalfLifeSec",
            "backfillDepth", "defaultRuntimeSec");
    private static final ObjectMapper JSON = new ObjectMapper();

    public static SchedulerSettings defaults(String policy) {
        return new SchedulerSettings(policy, "binpack,topology", PriorityAgingPolicy.Args.DEFAULTS.agingPerHour(),
                FairSharePolicy.Args.DEFAULTS.halfLifeMs() / 1000, PolicyArgs.DEFAULT_BACKFILL_DEPTH, SchedulerConfig.DEFAULT_RUNTIME_MS / 1000);
    }

    /** A full or partial update over {@code base}; every given field is validated. */
    public static SchedulerSettings parse(JsonNode body, SchedulerSettings base) {
        Fields f = Fields.of(body, "", FIELDS);
        String policy = f.string("policy", base.policy, 64);
        if (!PolicyRegistry.names().contains(policy) || policy.equals("srtf-oracle")) {
            throw ServiceException.invalid("policy", "unknown policy '" + policy + "'; the service runs: "
                    + String.join(", ", PolicyRegistry.names().stream().filter(p -> !p.equals("srtf-oracle")).toList()));
        }
        String placement = f.string("placement", base.placement, 200);
        try {
            PlacementConfig.parse(placement);
        } catch (SpecException e) {
            throw ServiceException.invalid("placement", e.getMessage());
        }
        return new SchedulerSettings(policy, placement,
                f.number("agingPerHour", base.agingPerHour, 0, 1e6),
                f.integer("fairShareHalfLifeSec", base.fairShareHalfLifeSec, 0, 365L * 24 * 3600),
                (int) f.integer("backfillDepth", base.backfillDepth, 1, 100_000),
                f.integer("defaultRuntimeSec", base.defaultRuntimeSec, 1, 365L * 24 * 3600));
    }

    /** The engine's configuration: of the policy settings here, those the policy has (the others keep their defaults). */
    public SchedulerConfig toConfig(Map<String, TenantConfig> tenants) {
        PolicyType<?> type = PolicyRegistry.type(policy);
        Map<String, Object> args = new LinkedHashMap<>();
        args.put("agingPerHour", agingPerHour);
        args.put("halfLifeMs", fairShareHalfLifeSec * 1000);
        args.put("backfillDepth", backfillDepth);
        args.keySet().retainAll(type.argNames());
        return new SchedulerConfig(policy, type.parseArgs(args), PlacementConfig.parse(placement), tenants, defaultRuntimeSec * 1000);
    }

    public String toJson() {
        ObjectNode o = JSON.valueToTree(this);
        return o.toString();
    }

    public static SchedulerSettings fromJson(String json, SchedulerSettings base) {
        try {
            return parse(JSON.readTree(json), base);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("stored scheduler settings are not JSON: " + e.getOriginalMessage());
        }
    }
}
