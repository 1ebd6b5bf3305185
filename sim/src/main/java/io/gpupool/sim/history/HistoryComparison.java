package io.gpupool.sim.history;

import io.gpupool.engine.SchedulerConfig;
import io.gpupool.engine.config.PoolConfig;
import io.gpupool.engine.policy.RuntimePredictor;
import io.gpupool.model.ClusterSpec;
import io.gpupool.sim.PolicyRuns;
import io.gpupool.sim.Simulator;
import io.gpupool.sim.metrics.SimulationResult;
import io.gpupool.sim.trace.Trace;
import io.gpupool.sim.trace.TraceJob;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * "What if" on a pool's own history: the record first ({@link RecordedReplay}), then a replay of the same jobs (their
 * submissions and run times) under each policy, on the same pool with the same placement and tenants. The command
 * line ({@code simulate --history}) and the service ({@code GET /api/v1/history/whatif}) both call this.
 */
public final class HistoryComparison {
    /**
     * What a comparison runs on.
     *
     * @param pool          the pool's configuration: placement, tenants, predictor; each policy compared takes its settings
     *                      from here when it is the pool's policy ({@link PoolConfig#withPolicy})
     * @param recordedLabel the record's row, e.g. {@code recorded (fair-share)}
     * @param predictor     a new run-time predictor for each replay, from its configuration (null: the engine's default)
     */
    public record Setup(ClusterSpec cluster, PoolConfig pool, String recordedLabel, String traceLabel, long fairnessWindowMs,
                        Function<SchedulerConfig, Supplier<? extends RuntimePredictor>> predictor) {}

    private HistoryComparison() {}

    /** The record's row, then one row per policy in the order given. */
    public static List<SimulationResult> compare(Setup setup, List<RecordedJob> jobs, List<String> policies, int threads, PolicyRuns.Listener listener) {
        List<TraceJob> traceJobs = jobs.stream().map(RecordedJob::job).toList();
        Trace trace = Trace.of(setup.traceLabel(), traceJobs);
        List<SimulationResult> out = new ArrayList<>();
        out.add(RecordedReplay.replay(setup.cluster(), setup.pool().toSchedulerConfig(), jobs, setup.recordedLabel(), setup.traceLabel(),
                setup.fairnessWindowMs()));
        out.addAll(PolicyRuns.run(policies, threads, listener, (i, progress) -> {
            SchedulerConfig config = setup.pool().withPolicy(policies.get(i)).toSchedulerConfig();
            return new Simulator(setup.cluster(), config)
                    .fairnessWindowMs(setup.fairnessWindowMs())
                    .predictor(setup.predictor() == null ? null : setup.predictor().apply(config))
                    .progress(progress)
                    .run(trace);
        }));
        return out;
    }
}
