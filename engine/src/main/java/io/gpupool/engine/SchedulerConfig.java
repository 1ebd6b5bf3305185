package io.gpupool.engine;

import io.gpupool.engine.placement.PlacementConfig;
import io.gpupool.engine.policy.PolicyRegistry;
import io.gpupool.model.SpecException;

import java.util.List;
import java.util.Map;

/**
 * Every knob of the engine in one place.
 *
 * @param policy              queue policy name (see {@link PolicyRegistry})
 * @param placement           node scorers, GPU policy, candidate sample size
 * @param tenants             weights, guarantees and limits; unknown tenants get weight 1, no quota
 * @param agingPerHour        {@code priority}: effective priority gained per hour of waiting
 * @param fairShareHalfLifeMs {@code fair-share}: half-life of past usage (0 = only what is held now)
 * @param lasThresholdsGpuSec {@code las}: attained GPU-seconds at which a job drops to the next queue
 * @param backfillDepth       queued jobs behind a blocked head that backfill considers per round
 * @param defaultRuntimeMs    run time assumed for a job with no estimate and no history
 */
public record SchedulerConfig(
        String policy,
        PlacementConfig placement,
        Map<String, TenantConfig> tenants,
        double agingPerHour,
        long fairShareHalfLifeMs,
        List<Double> lasThresholdsGpuSec,
        int backfillDepth,
        long defaultRuntimeMs) {

    public SchedulerConfig {
        PolicyRegistry.requireKnown(policy);
        if (placement == null) placement = PlacementConfig.defaults();
        tenants = Map.copyOf(tenants);
        if (agingPerHour < 0) throw new SpecException("scheduler", "aging-per-hour", "must be >= 0");
        if (fairShareHalfLifeMs < 0) throw new SpecException("scheduler", "half-life", "must be >= 0");
        lasThresholdsGpuSec = List.copyOf(lasThresholdsGpuSec);
        double prev = 0;
        for (double t : lasThresholdsGpuSec) {
            if (!(t > prev)) throw new SpecException("scheduler", "las-thresholds", "must be positive and increasing, got " + lasThresholdsGpuSec);
            prev = t;
        }
        if (backfillDepth < 1) throw new SpecException("scheduler", "backfill-depth", "must be >= 1");
        if (defaultRuntimeMs <= 0) throw new SpecException("scheduler", "default-runtime", "must be > 0");
    }

    public static SchedulerConfig defaults(String policy) {
        return new SchedulerConfig(policy, PlacementConfig.defaults(), Map.of(), 1.0, 3_600_000L,
                List.of(3600.0, 36_000.0), 200, 3_600_000L);
    }

    public SchedulerConfig withPolicy(String p) {
        return new SchedulerConfig(p, placement, tenants, agingPerHour, fairShareHalfLifeMs, lasThresholdsGpuSec, backfillDepth, defaultRuntimeMs);
    }

    public SchedulerConfig withPlacement(PlacementConfig p) {
        return new SchedulerConfig(policy, p, tenants, agingPerHour, fairShareHalfLifeMs, lasThresholdsGpuSec, backfillDepth, defaultRuntimeMs);
    }

    public SchedulerConfig withTenants(Map<String, TenantConfig> t) {
        return new SchedulerConfig(policy, placement, t, agingPerHour, fairShareHalfLifeMs, lasThresholdsGpuSec, backfillDepth, defaultRuntimeMs);
    }

    public SchedulerConfig withAgingPerHour(double a) {
        return new SchedulerConfig(policy, placement, tenants, a, fairShareHalfLifeMs, lasThresholdsGpuSec, backfillDepth, defaultRuntimeMs);
    }

    public SchedulerConfig withFairShareHalfLifeMs(long h) {
        return new SchedulerConfig(policy, placement, tenants, agingPerHour, h, lasThresholdsGpuSec, backfillDepth, defaultRuntimeMs);
    }

    public SchedulerConfig withLasThresholdsGpuSec(List<Double> t) {
        return new SchedulerConfig(policy, placement, tenants, agingPerHour, fairShareHalfLifeMs, t, backfillDepth, defaultRuntimeMs);
    }

    public SchedulerConfig withBackfillDepth(int d) {
        return new SchedulerConfig(policy, placement, tenants, agingPerHour, fairShareHalfLifeMs, lasThresholdsGpuSec, d, defaultRuntimeMs);
    }
}
