package io.gpupool.server.core;

import io.gpupool.engine.placement.PlacementConfig;
import io.gpupool.engine.policy.LasPolicy;
import io.gpupool.engine.policy.PriorityAgingPolicy;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The settings' stored form: the tree now, the flat fields of stores written before it. */
class SchedulerSettingsTest {
    private static final SchedulerSettings DEFAULTS = SchedulerSettings.defaults("fair-share").withPredictor("gbt");

    @Test
    void aStoreWrittenBeforeTheTreeReadsItsFlatFields() {
        String old = "{\"policy\":\"priority\",\"placement\":\"spread;limit=0\",\"agingPerHour\":2.5,\"fairShareHalfLifeSec\":3600,"
                + "\"backfillDepth\":50,\"defaultRuntimeSec\":600}";
        SchedulerSettings s = SchedulerSettings.fromJson(old, DEFAULTS);
        assertThat(s.policy()).isEqualTo("priority");
        assertThat(s.tree().policy().args()).isEqualTo(new PriorityAgingPolicy.Args(2.5, 50));
        assertThat(s.tree().placement()).isEqualTo(PlacementConfig.parse("spread;limit=0"));
        assertThat(s.tree().defaultRuntimeMs()).isEqualTo(600_000);
        // the predictor is the one this start runs, never a stored one
        assertThat(s.predictor()).isEqualTo("gbt");
    }

    @Test
    void theStoredTreeReadsBackEqualWithoutTenantsOrPredictor() {
        SchedulerSettings las = new SchedulerSettings(DEFAULTS.tree().withPolicy(new io.gpupool.engine.config.PoolConfig.Policy("las",
                new LasPolicy.Args(List.of(60.0, 600.0)))).withDefaultRuntimeMs(90_000));
        String json = las.toJson();
        assertThat(json).doesNotContain("tenants", "predictor");
        assertThat(SchedulerSettings.fromJson(json, DEFAULTS)).isEqualTo(las);
        assertThat(las.placement()).isEqualTo("binpack,topology");
    }
}
