package io.gpupool.predict.runtime;

import io.gpupool.engine.SchedulerConfig;
import io.gpupool.model.ClusterSpecs;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.JobSpec;
import io.gpupool.model.SpecException;
import io.gpupool.sim.Simulator;
import io.gpupool.sim.metrics.JobOutcome;
import io.gpupool.sim.trace.TraceJob;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * qssf and EASY backfill consult the predictor for jobs without an estimate, and the predictor learns online
 * from the jobs that finish during the replay. Every start time below is worked out by hand.
 */
class SchedulingWithPredictorTest {

    private static TraceJob job(String id, String user, String name, long submitS, long runS, int gpus) {
        return new TraceJob(JobSpec.builder(id).user(user).name(name).gpus(gpus).submitSec(submitS).build(), runS * 1000);
    }

    /** First start (s) of every job, replaying {@code jobs} under {@code policy} with the named predictor. */
    private static Map<String, Long> starts(String policy, String predictor, String cluster, List<TraceJob> jobs) {
        Map<String, Long> starts = new HashMap<>();
        SchedulerConfig config = SchedulerConfig.defaults(policy);
        new Simulator(ClusterSpecs.parse(cluster, GpuCatalog.standard()), config)
                .predictor(() -> Predictors.forScheduling(predictor, config.defaultRuntimeMs()))
                .onJobDone((JobOutcome o) -> starts.put(o.id(), o.firstStartMs() / 1000))
                .run(jobs);
        return starts;
    }

    /**
     * One GPU. Alice's train-long (1000 s) and train-short (10 s) run once from t=0 (nothing known yet: both are
     * predicted the default, so trace order: 0-1000, 1000-1010). A blocker holds the GPU 1500-1600; meanwhile
     * train-long, train-short (no estimates) and bob's job with an estimate of 5 s arrive at 1550, in that order.
     */
    private static List<TraceJob> qssfTrace() {
        TraceJob estimated = new TraceJob(JobSpec.builder("E").user("bob").name("eval").gpus(1).submitSec(1550).estimateSec(5).build(), 5_000);
        return List.of(
                job("warm-long", "alice", "train-long", 0, 1000, 1),
                job("warm-short", "alice", "train-short", 0, 10, 1),
                job("blocker", "carol", "blocker", 1500, 100, 1),
                job("L", "alice", "train-long", 1550, 1000, 1),
                job("S", "alice", "train-short", 1550, 10, 1),
                estimated);
    }

    @Test
    void qssfWithTheHistoryPredictorRunsTheJobPredictedShortestFirst() {
        Map<String, Long> s = starts("qssf", "history", "1x1:A100-80GB", qssfTrace());
        assertThat(s).containsEntry("warm-long", 0L).containsEntry("warm-short", 1000L).containsEntry("blocker", 1500L);
        // at 1600: E's own estimate 5 s, S learned 10 s, L learned 1000 s
        assertThat(s).containsEntry("E", 1600L).containsEntry("S", 1605L).containsEntry("L", 1615L);
    }

    @Test
    void withoutAPredictorJobsWithoutEstimatesTieAtTheDefaultAndKeepArrivalOrder() {
        Map<String, Long> s = starts("qssf", DefaultRuntime.NAME, "1x1:A100-80GB", qssfTrace());
        // E's estimate still counts; L and S are both predicted the default 1 h: arrival order
        assertThat(s).containsEntry("E", 1600L).containsEntry("L", 1605L).containsEntry("S", 2605L);
    }

    /**
     * Two GPUs. Learning: alice's long (1000 s) and bob's quick (10 s) at t=0. Then long again at 2000 (one GPU);
     * at 2100 carol's 2-GPU job heads the queue and cannot start, so EASY reserves both GPUs for the moment the
     * long job is expected to end; bob's quick job (no estimate) arrives behind it.
     */
    private static List<TraceJob> backfillTrace() {
        return List.of(
                job("warm-long", "alice", "long", 0, 1000, 1),
                job("warm-quick", "bob", "quick", 0, 10, 1),
                job("R", "alice", "long", 2000, 1000, 1),
                job("H", "carol", "wide", 2100, 100, 2),
                job("C", "bob", "quick", 2100, 10, 1));
    }

    @Test
    void easyBackfillStartsAJobPredictedToEndBeforeTheReservation() {
        Map<String, Long> s = starts("fcfs-backfill", "history", "1x2:A100-80GB", backfillTrace());
        // R expected to end at 2000 + 1000 = 3000 (the reservation); C expected to end at 2110 <= 3000: backfilled
        assertThat(s).containsEntry("R", 2000L).containsEntry("C", 2100L).containsEntry("H", 3000L);
    }

    @Test
    void easyBackfillWithoutAPredictorCannotProveTheJobEndsInTime() {
        Map<String, Long> s = starts("fcfs-backfill", DefaultRuntime.NAME, "1x2:A100-80GB", backfillTrace());
        // R expected to end at 2000 + 3600 = 5600; C expected to end at 2100 + 3600 = 5700 > 5600: it waits for H
        assertThat(s).containsEntry("R", 2000L).containsEntry("H", 3000L).containsEntry("C", 3100L);
    }

    @Test
    void anUnknownPredictorNameSaysWhichExist() {
        assertThatThrownBy(() -> Predictors.forScheduling("oracle", 1000))
                .isInstanceOfSatisfying(SpecException.class, e -> assertThat(e.field()).isEqualTo("name"))
                .hasMessageContaining("none, global-median, history, gbt");
    }
}
