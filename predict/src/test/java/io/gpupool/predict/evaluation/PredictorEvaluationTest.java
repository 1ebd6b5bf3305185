package io.gpupool.predict.evaluation;

import io.gpupool.engine.SchedulerConfig;
import io.gpupool.model.ClusterSpecs;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.JobSpec;
import io.gpupool.predict.evaluation.PredictorEvaluation.ModelResult;
import io.gpupool.sim.trace.Trace;
import io.gpupool.sim.trace.TraceJob;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

class PredictorEvaluationTest {
    private static final List<String> MODELS = List.of("global-median", "history", "gbt");

    private static Map<String, ModelResult> byModel(PredictorEvaluation.Result r) {
        return r.models().stream().collect(Collectors.toMap(ModelResult::model, Function.identity()));
    }

    /** Two kinds of jobs per user, 10 h on 4 GPUs and 5 min on 1, arriving faster than one 8-GPU server drains them. */
    private static List<TraceJob> structured(int n) {
        Random rnd = new Random(3);
        List<TraceJob> jobs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            boolean train = rnd.nextInt(4) == 0;
            int user = rnd.nextInt(4);
            long seconds = (long) ((train ? 36_000 : 300) * (1 + user * 0.5) * Math.exp(rnd.nextGaussian() * 0.2));
            JobSpec s = JobSpec.builder("j" + i).user("u" + user).tenant("t" + user % 2)
                    .name((train ? "train-run" : "eval-") + rnd.nextInt(1000)).gpus(train ? 4 : 1).submitSec(i * 1200L).build();
            jobs.add(new TraceJob(s, seconds * 1000));
        }
        return jobs;
    }

    @Test
    void predictorsThatKnowTheJobsCloseTheGapAndTheFiguresAreConsistent() {
        PredictorEvaluation e = new PredictorEvaluation(ClusterSpecs.parse("1x8:A100-80GB", GpuCatalog.standard()),
                SchedulerConfig.defaults("qssf"), MODELS, line -> {});
        PredictorEvaluation.Result r = e.run(Trace.of("structured", structured(500)));
        assertThat(r.trainJobs()).isEqualTo(300);
        assertThat(r.testJobs()).isEqualTo(200);
        assertThat(r.models()).extracting(ModelResult::model).containsExactly("global-median", "history", "gbt", TrueRuntimes.NAME);
        Map<String, ModelResult> m = byModel(r);
        assertThat(r.fcfsAvgJctS()).isGreaterThan(r.oracleAvgJctS());
        for (String learned : List.of("history", "gbt")) {
            ModelResult x = m.get(learned);
            assertThat(x.error().within2x()).as(learned).isGreaterThan(0.9);
            assertThat(x.online().within2x()).as(learned).isGreaterThan(0.9);
            assertThat(x.error().medianAbsLogError()).isLessThan(m.get("global-median").error().medianAbsLogError());
            assertThat(r.gapClosed(x)).as(learned).isGreaterThanOrEqualTo(0.5);
        }
        assertThat(m.get("global-median").error().within2x()).isLessThan(m.get("history").error().within2x() - 0.2);
        assertThat(m.get(TrueRuntimes.NAME).error().medianAbsLogError()).isZero();
        assertThat(r.predictorShare(m.get("global-median"))).isZero();
        assertThat(r.predictorShare(m.get(TrueRuntimes.NAME))).isEqualTo(1.0);
    }
}
