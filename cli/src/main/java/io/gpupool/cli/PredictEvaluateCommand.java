package io.gpupool.cli;

import io.gpupool.engine.SchedulerConfig;
import io.gpupool.engine.placement.PlacementConfig;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.ClusterSpecs;
import io.gpupool.model.GpuCatalog;
import io.gpupool.predict.evaluation.PredictorEvaluation;
import io.gpupool.predict.evaluation.PredictorEvaluation.ModelResult;
import io.gpupool.predict.runtime.Predictors;
import io.gpupool.sim.trace.TraceContext;
import io.gpupool.sim.trace.TraceFile;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code gpupool predict evaluate}: prediction error and scheduling effect of each run-time predictor on a trace. */
@Command(name = "evaluate",
        header = "Score the run-time predictors on a trace: error, and mean JCT of qssf with each.",
        description = "Trains each predictor on the first 60%% of the jobs by submit time and tests on the rest: the median "
                + "absolute log error and the share of jobs predicted within 2x, then the mean JCT of qssf replaying the test "
                + "jobs with that predictor (still learning as jobs finish), against fcfs and the clairvoyant srtf-oracle on "
                + "the same jobs. The last row runs qssf with the true run times (the best a predictor could do).%n")
public final class PredictEvaluateCommand implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Option(names = "--trace", required = true, paramLabel = "FILE", description = "Trace file (format: --trace-format).")
    Path trace;

    @Mixin TraceReading traceReading;

    @Option(names = "--cluster", required = true, paramLabel = "SPEC", description = "The pool the test jobs are replayed on, e.g. 64x8:V100-32GB.")
    String cluster;

    @Option(names = "--models", defaultValue = "global-median,history,gbt", split = ",", paramLabel = "NAME",
            description = "Predictors to evaluate (default: ${DEFAULT-VALUE}).")
    List<String> models;

    @Option(names = "--placement", defaultValue = "binpack,topology", paramLabel = "NAME", description = "Placement of the replays (default: ${DEFAULT-VALUE}).")
    String placement;

    @Mixin TableOrJson output;

    @Mixin Notes notes;

    @Override
    public Integer call() {
        GpuCatalog catalog = GpuCatalog.standard();
        ClusterSpec cs = ClusterSpecs.parse(cluster, catalog);
        SchedulerConfig base = SchedulerConfig.defaults("qssf").withPlacement(PlacementConfig.parse(placement));
        for (String m : models) Predictors.create(m, base.defaultRuntimeMs());
        TraceFile file = traceReading.open(trace, new TraceContext(catalog, Math.max(1, cs.maxGpusPerNode())));
        PredictorEvaluation.Result r = new PredictorEvaluation(cs, base, models, notes::say).run(file);
        PrintWriter out = spec.commandLine().getOut();
        if (output.json()) Json.print(out, json(r, cluster));
        else out.print(table(r, cluster));
        out.flush();
        return 0;
    }

    static List<Map<String, Object>> json(PredictorEvaluation.Result r, String cluster) {
        List<Map<String, Object>> rows = new ArrayList<>();
        for (ModelResult m : r.models()) {
            Map<String, Object> o = new LinkedHashMap<>();
            o.put("model", m.model());
            o.put("median_abs_log_error", round(m.error().medianAbsLogError()));
            o.put("within_2x", round(m.error().within2x()));
            o.put("online_median_abs_log_error", round(m.online().medianAbsLogError()));
            o.put("online_within_2x", round(m.online().within2x()));
            o.put("fcfs_avg_jct_s", round(r.fcfsAvgJctS()));
            o.put("qssf_avg_jct_s", round(m.qssfAvgJctS()));
            o.put("oracle_avg_jct_s", round(r.oracleAvgJctS()));
            o.put("gap_closed", round(r.gapClosed(m)));
            o.put("predictor_share", round(r.predictorShare(m)));
            o.put("train_jobs", r.trainJobs());
            o.put("test_jobs", r.testJobs());
            o.put("cluster", cluster);
            o.put("trainings", m.trainings());
            o.put("training_s", round(m.trainingSeconds()));
            rows.add(o);
        }
        return rows;
    }

    static String table(PredictorEvaluation.Result r, String cluster) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "%s: trained on %,d jobs, tested on %,d; replays on %s%n", r.trace(), r.trainJobs(), r.testJobs(), cluster));
        sb.append(String.format(Locale.ROOT, "fcfs mean JCT %s, srtf-oracle mean JCT %s%n%n", hours(r.fcfsAvgJctS()), hours(r.oracleAvgJctS())));
        TextTable t = new TextTable("MODEL", "|LN ERR|", "WITHIN 2X", "ONLINE |LN ERR|", "ONLINE 2X", "QSSF MEAN JCT", "GAP CLOSED",
                "PREDICTOR SHARE", "TRAININGS").alignRight(1, 2, 3, 4, 5, 6, 7, 8);
        for (ModelResult m : r.models()) {
            t.row(m.model(), String.format(Locale.ROOT, "%.3f", m.error().medianAbsLogError()), percent(m.error().within2x()),
                    String.format(Locale.ROOT, "%.3f", m.online().medianAbsLogError()), percent(m.online().within2x()),
                    hours(m.qssfAvgJctS()), percent(r.gapClosed(m)), percent(r.predictorShare(m)),
                    m.trainings() == 0 ? "" : String.format(Locale.ROOT, "%d (%.1f s)", m.trainings(), m.trainingSeconds()));
        }
        sb.append(t.render());
        sb.append("|ln err|: median |ln(predicted / actual)| on the test jobs, trained on the first 60% only; online: as qssf saw\n");
        sb.append("each test job on arrival, learning as jobs finished. gap closed = (fcfs - qssf) / (fcfs - srtf-oracle) mean JCT;\n");
        sb.append("predictor share = (qssf with global-median - qssf) / (qssf with global-median - qssf with true run times).\n");
        return sb.toString();
    }

    private static String percent(double share) {
        return Double.isFinite(share) ? String.format(Locale.ROOT, "%.1f%%", share * 100) : "-";
    }

    private static String hours(double seconds) {
        return String.format(Locale.ROOT, "%.2f h", seconds / 3600);
    }

    private static double round(double v) {
        return Double.isFinite(v) ? Math.round(v * 1000) / 1000.0 : v;
    }
}
