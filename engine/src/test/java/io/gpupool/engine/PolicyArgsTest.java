package io.gpupool.engine;

import io.gpupool.engine.policy.FairSharePolicy;
import io.gpupool.engine.policy.LasPolicy;
import io.gpupool.engine.policy.PolicyArgs;
import io.gpupool.engine.policy.PolicyRegistry;
import io.gpupool.engine.policy.PolicyType;
import io.gpupool.engine.policy.PriorityAgingPolicy;
import io.gpupool.model.SpecException;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static io.gpupool.engine.TestPools.A100;
import static io.gpupool.engine.TestPools.job;
import static io.gpupool.engine.TestPools.pool;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Each policy's typed settings: read from a map of camelCase keys over the defaults, checked, and used. */
class PolicyArgsTest {

    private static SpecException error(Runnable r) {
        try {
            r.run();
        } catch (SpecException e) {
            return e;
        }
        throw new AssertionError("no SpecException");
    }

    @Test
    void givenKeysReplaceTheDefaultsAndNumbersMayBeText() {
        PolicyType<?> priority = PolicyRegistry.type("priority");
        assertThat(priority.argNames()).containsExactly("agingPerHour", "backfillDepth");
        assertThat(priority.parseArgs(Map.of("agingPerHour", 2))).isEqualTo(new PriorityAgingPolicy.Args(2, 200));
        assertThat(priority.parseArgs(Map.of("agingPerHour", "0.5", "backfillDepth", "7"))).isEqualTo(new PriorityAgingPolicy.Args(0.5, 7));
        assertThat(PolicyRegistry.type("las").parseArgs(Map.of("thresholdsGpuSec", List.of(10, 20.5))))
                .isEqualTo(new LasPolicy.Args(List.of(10.0, 20.5)));
        assertThat(PolicyRegistry.type("las").parseArgs(Map.of("thresholdsGpuSec", "100, 1000")))
                .isEqualTo(new LasPolicy.Args(List.of(100.0, 1000.0)));
        assertThat(PolicyRegistry.type("fair-share").parseArgs(Map.of())).isEqualTo(FairSharePolicy.Args.DEFAULTS);
    }

    @Test
    void everyPolicysSettingsGoThroughAMapAndBackUnchanged() {
        for (String name : PolicyRegistry.names()) {
            PolicyType<?> t = PolicyRegistry.type(name);
            assertThat(t.parseArgs(t.argsToMap(t.defaults()))).as(name).isEqualTo(t.defaults());
        }
        assertThat(PolicyRegistry.type("las").argsToMap(LasPolicy.Args.DEFAULTS)).isEqualTo(Map.of("thresholdsGpuSec", List.of(3600.0, 36_000.0)));
    }

    @Test
    void unknownKeysAndBadValuesAreErrorsNamingTheField() {
        SpecException unknown = error(() -> PolicyRegistry.type("priority").parseArgs(Map.of("aging", 2)));
        assertThat(unknown.where()).isEqualTo("policy priority");
        assertThat(unknown.field()).isEqualTo("aging");
        assertThat(unknown.rule()).contains("agingPerHour", "backfillDepth");
        assertThat(error(() -> PolicyRegistry.type("fcfs").parseArgs(Map.of("backfillDepth", 3))).field()).isEqualTo("backfillDepth");
        SpecException refused = error(() -> PolicyRegistry.type("priority").parseArgs(Map.of("agingPerHour", -1)));
        assertThat(refused.where()).isEqualTo("policy priority");
        assertThat(refused.field()).isEqualTo("agingPerHour");
        assertThat(error(() -> PolicyRegistry.type("priority").parseArgs(Map.of("agingPerHour", "fast"))).field()).isEqualTo("agingPerHour");
        assertThat(error(() -> PolicyRegistry.type("priority").parseArgs(Map.of("backfillDepth", 1.5))).field()).isEqualTo("backfillDepth");
        assertThat(error(() -> PolicyRegistry.type("fcfs-backfill").parseArgs(Map.of("backfillDepth", 0))).field()).isEqualTo("backfillDepth");
        assertThat(error(() -> PolicyRegistry.type("themis").parseArgs(Map.of("backfillDepth", 0))).where()).isEqualTo("policy themis");
        assertThat(error(() -> PolicyRegistry.type("fcfs-backfill").parseArgs(Map.of("backfillDepth", 1L << 40))).field()).isEqualTo("backfillDepth");
        assertThat(error(() -> PolicyRegistry.type("fair-share").parseArgs(Map.of("halfLifeMs", -5))).field()).isEqualTo("halfLifeMs");
        assertThat(error(() -> PolicyRegistry.type("las").parseArgs(Map.of("thresholdsGpuSec", List.of(100, 50)))).field()).isEqualTo("thresholdsGpuSec[1]");
        assertThat(error(() -> PolicyRegistry.type("las").parseArgs(Map.of("thresholdsGpuSec", List.of(100, "x")))).field()).isEqualTo("thresholdsGpuSec[1]");
        assertThat(error(() -> PolicyRegistry.type("las").parseArgs(Map.of("thresholdsGpuSec", 100))).field()).isEqualTo("thresholdsGpuSec");
    }

    @Test
    void aConfigHoldsArgsOfItsOwnPolicyAndANewPolicyStartsFromItsDefaults() {
        SchedulerConfig las = SchedulerConfig.defaults("las").withPolicyArgs(Map.of("thresholdsGpuSec", List.of(100)));
        assertThat(las.policyArgs()).isEqualTo(new LasPolicy.Args(List.of(100.0)));
        assertThat(error(() -> SchedulerConfig.defaults("fair-share").withPolicyArgs(new LasPolicy.Args(List.of(1.0)))).field()).isEqualTo("args");
        assertThat(las.withPolicy("fcfs").policyArgs()).isEqualTo(PolicyArgs.None.INSTANCE);
        assertThat(las.withPolicy("priority").policyArgs()).isEqualTo(PriorityAgingPolicy.Args.DEFAULTS);
        assertThatThrownBy(() -> SchedulerConfig.defaults("nope")).isInstanceOf(SpecException.class);
    }

    /** An 8-GPU head blocked behind a running 4-GPU job, then two 1-GPU jobs that fit beside it: backfill depth decides how many are tried. */
    @Test
    void backfillDepthBoundsTheJobsTriedBehindAReservation() {
        for (int depth : new int[] {1, 200}) {
            Scheduler s = new Scheduler(pool(1, 8, A100), SchedulerConfig.defaults("fcfs-backfill").withPolicyArgs(Map.of("backfillDepth", depth)));
            s.submit(job("run", 4).submitMs(0).estimateMs(100_000).build(), 0);
            s.schedule(0);
            s.submit(job("head", 8).submitMs(1).build(), 1);
            s.submit(job("b", 1).submitMs(2).estimateMs(1000).build(), 2);
            s.submit(job("c", 1).submitMs(3).estimateMs(1000).build(), 3);
            List<String> started = s.schedule(3).started();
            assertThat(started).as("depth " + depth).isEqualTo(depth == 1 ? List.of("b") : List.of("b", "c"));
        }
    }
}
