package io.gpupool.predict.evaluation;

import io.gpupool.engine.SchedulerConfig;
import io.gpupool.engine.policy.RuntimePredictor;
import io.gpupool.model.ClusterSpec;
import io.gpupool.predict.runtime.FinishedJob;
import io.gpupool.predict.runtime.GbtPredictor;
import io.gpupool.predict.runtime.HistoryReplay;
import io.gpupool.predict.runtime.PersistentPredictor;
import io.gpupool.predict.runtime.PredictionError;
import io.gpupool.predict.runtime.Predictors;
import io.gpupool.sim.Simulator;
import io.gpupool.sim.metrics.SimulationResult;
import io.gpupool.sim.trace.Trace;
import io.gpupool.sim.trace.TraceJob;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * How good the run-time predictors are on a trace, and what that is worth to scheduling. The jobs are split
 * by submit time: the first {@value #TRAIN_SHARE} teach each predictor (replayed as a live service would have
 * seen them, {@link HistoryReplay}); the rest are the test. Per predictor: its error on the test jobs
 * (trained on the first part only), and the mean JCT of {@code qssf} replaying the test jobs with it (it
 * keeps learning as jobs finish, as in service), against {@code fcfs} and the clairvoyant {@code srtf-oracle}
 * on the same jobs. The online error is that of the first prediction each test job got in the qssf replay, on
 * arrival, when the predictor had learned from every job finished by then. A last row,
 * {@value TrueRuntimes#NAME}, runs qssf with the true run times: the best any predictor could do for qssf.
 */
public final class PredictorEvaluation {
    public static final double TRAIN_SHARE = 0.6;

    /**
     * One predictor's figures.
     *
     * @param error           on the test jobs, trained on the training jobs only
     * @param online          on the test jobs as qssf saw them on arrival, learning as jobs finished
     * @param qssfAvgJctS     mean JCT of qssf on the test jobs with this predictor
     * @param trainings       trainings during the qssf replay (gradient-boosted trees)
     * @param trainingSeconds time those trainings took
     */
    public record ModelResult(String model, PredictionError error, PredictionError online, double qssfAvgJctS, long trainings,
                              double trainingSeconds) {}

    /** The whole evaluation. */
    public record Result(String trace, int trainJobs, int testJobs, double fcfsAvgJctS, double oracleAvgJctS, List<ModelResult> models) {
        /** (fcfs - qssf) / (fcfs - srtf-oracle) mean JCT: the target is at least 0.5. */
        public double gapClosed(ModelResult m) {
            double gap = fcfsAvgJctS - oracleAvgJctS;
            return gap == 0 ? Double.NaN : (fcfsAvgJctS - m.qssfAvgJctS()) / gap;
        }

        /**
         * The predictor's own part: (qssf with global-median - qssf with it) / (qssf with global-median - qssf with the
         * true run times). qssf orders by predicted run time x GPUs, so even a constant prediction orders by GPUs;
         * this is the share of the remaining improvement that better predictions bought. NaN without both rows.
         */
        public double predictorShare(ModelResult m) {
            ModelResult constant = find("global-median");
            ModelResult perfect = find(TrueRuntimes.NAME);
            if (constant == null || perfect == null) return Double.NaN;
            double room = constant.qssfAvgJctS() - perfect.qssfAvgJctS();
            return room == 0 ? Double.NaN : (constant.qssfAvgJctS() - m.qssfAvgJctS()) / room;
        }

        private ModelResult find(String name) {
            return models.stream().filter(m -> m.model().equals(name)).findFirst().orElse(null);
        }
    }

    private final ClusterSpec cluster;
    private final SchedulerConfig base;
    private final List<String> models;
    private final Consumer<String> log;

    /**
     * @param base   configuration of every replay (placement, default run time); its policy is replaced
     * @param models predictor names ({@link Predictors#names()})
     * @param log    progress lines
     */
    public PredictorEvaluation(ClusterSpec cluster, SchedulerConfig base, List<String> models, Consumer<String> log) {
        for (String m : models) Predictors.create(m, base.defaultRuntimeMs());   // unknown names fail before any work
        this.cluster = cluster;
        this.base = base;
        this.models = List.copyOf(models);
        this.log = log;
    }

    public Result run(Trace trace) {
        List<TraceJob> all = new ArrayList<>();
        try (Trace.Cursor c = trace.open()) {
            while (c.hasNext()) all.add(c.next());
        }
        if (all.size() < 10) throw new io.gpupool.model.SpecException("--trace", "trace", "needs at least 10 jobs to split into training and test, has " + all.size());
        int split = (int) Math.floor(all.size() * TRAIN_SHARE);
        List<FinishedJob> train = finished(all.subList(0, split));
        List<TraceJob> testJobs = List.copyOf(all.subList(split, all.size()));
        List<FinishedJob> test = finished(testJobs);
        long[] actual = test.stream().mapToLong(FinishedJob::runMs).toArray();
        Trace testTrace = Trace.of(trace.label() + " (test " + testJobs.size() + " jobs)", testJobs);

        log.accept("replaying " + testJobs.size() + " test jobs under fcfs and srtf-oracle");
        double fcfs = simulate("fcfs", testTrace, null).jct().mean();
        double oracle = simulate("srtf-oracle", testTrace, null).jct().mean();

        List<ModelResult> results = new ArrayList<>();
        for (String name : models) {
            log.accept("training " + name + " on " + train.size() + " jobs");
            PersistentPredictor p = Predictors.create(name, base.defaultRuntimeMs());
            p.learnInBatch(() -> HistoryReplay.replay(p, train));
            byte[] saved = save(p);
            long[] predicted = test.stream().mapToLong(j -> p.predictMs(j.spec())).toArray();
            PredictionError error = PredictionError.of(predicted, actual);
            log.accept("replaying the test jobs under qssf with " + name);
            List<RecordingPredictor> used = new ArrayList<>();
            SimulationResult q = simulate("qssf", testTrace, () -> {
                RecordingPredictor copy = new RecordingPredictor(load(saved));
                used.add(copy);
                return copy;
            });
            RecordingPredictor seen = used.getFirst();
            // jobs the scheduler never asked about (refused at submission) are left out
            List<FinishedJob> asked = test.stream().filter(j -> seen.firstPredictionMs(j.spec().id()) > 0).toList();
            long[] onArrival = asked.stream().mapToLong(j -> seen.firstPredictionMs(j.spec().id())).toArray();
            long[] askedActual = asked.stream().mapToLong(FinishedJob::runMs).toArray();
            long trainings = 0;
            double seconds = 0;
            if (seen.model() instanceof GbtPredictor g) {
                trainings = g.trainings();
                seconds = g.trainingNanos() / 1e9;
            }
            results.add(new ModelResult(name, error, PredictionError.of(onArrival, askedActual), q.jct().mean(), trainings, seconds));
        }
        Map<String, Long> truth = new HashMap<>();
        for (TraceJob t : testJobs) truth.put(t.spec().id(), t.durationMs());
        log.accept("replaying the test jobs under qssf with the true run times");
        double perfect = simulate("qssf", testTrace, () -> new TrueRuntimes(truth)).jct().mean();
        PredictionError none = PredictionError.of(actual, actual);
        results.add(new ModelResult(TrueRuntimes.NAME, none, none, perfect, 0, 0));
        return new Result(trace.label(), train.size(), test.size(), fcfs, oracle, results);
    }

    private SimulationResult simulate(String policy, Trace trace, Supplier<? extends RuntimePredictor> predictor) {
        Simulator sim = new Simulator(cluster, base.withPolicy(policy));
        if (predictor != null) sim.predictor(predictor);
        return sim.run(trace);
    }

    private static List<FinishedJob> finished(List<TraceJob> jobs) {
        return jobs.stream().map(t -> new FinishedJob(t.spec(), t.durationMs())).toList();
    }

    private static byte[] save(PersistentPredictor p) {
        try {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            p.save(out);
            return out.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static PersistentPredictor load(byte[] saved) {
        try {
            return Predictors.load(new ByteArrayInputStream(saved));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
