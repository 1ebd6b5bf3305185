package io.gpupool.predict.runtime;

import io.gpupool.model.JobSpec;
import io.gpupool.model.SpecException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Both predictors on a synthetic history with known structure, against the global-median baseline. */
class RuntimePredictorTest {
    private static final long DEFAULT_MS = 3_600_000L;
    private static List<FinishedJob> train;
    private static List<FinishedJob> test;
    private static final Map<String, PredictionError> ERRORS = new LinkedHashMap<>();
    private static final Map<String, PredictionError> NOTEBOOK_ERRORS = new LinkedHashMap<>();
    /** Few, shallow trees: enough to test the mechanics (schedule, persistence) quickly. */
    private static final GbtPredictor.Settings SMALL = new GbtPredictor.Settings(20, 4, 0.3, 1, 1000, 50_000, 50, 1, "reg:absoluteerror");

    @BeforeAll
    static void learnAndScore() {
        List<FinishedJob> all = SyntheticHistory.generate(3000, 20, 7);
        train = all.subList(0, 1800);
        test = all.subList(1800, all.size());
        List<FinishedJob> notebooks = test.stream().filter(j -> j.spec().name().equals("notebook")).toList();
        for (String name : List.of("global-median", "history", "gbt")) {
            PersistentPredictor p = Predictors.create(name, DEFAULT_MS);
            HistoryReplay.replay(p, train);
            ERRORS.put(name, PredictionError.of(predict(p, test), actual(test)));
            NOTEBOOK_ERRORS.put(name, PredictionError.of(predict(p, notebooks), actual(notebooks)));
        }
    }

    private static GbtPredictor smallGbt() {
        return new GbtPredictor(SMALL, HistoryPredictor.standard(DEFAULT_MS));
    }

    static long[] predict(PersistentPredictor p, List<FinishedJob> jobs) {
        return jobs.stream().mapToLong(j -> p.predictMs(j.spec())).toArray();
    }

    static long[] actual(List<FinishedJob> jobs) {
        return jobs.stream().mapToLong(FinishedJob::runMs).toArray();
    }

    @Test
    void bothModelsBeatTheGlobalMedianByFar() {
        PredictionError global = ERRORS.get("global-median");
        // The baseline cannot tell a 10-hour training run from a 5-minute evaluation.
        assertThat(global.medianAbsLogError()).isGreaterThan(1.5);
        assertThat(global.within2x()).isLessThan(0.3);
        for (String model : List.of("history", "gbt")) {
            PredictionError e = ERRORS.get(model);
            assertThat(e.jobs()).isEqualTo(test.size());
            // Noise is ln-normal with sigma 0.3: a perfect model has a median |log error| of about 0.2.
            assertThat(e.medianAbsLogError()).as(model + " " + e).isLessThan(0.35);
            assertThat(e.within2x()).as(model + " " + e).isGreaterThan(0.85);
        }
    }

    @Test
    void onlyTheTreesSeeThatNotebooksStartedAtNightRunLonger() {
        PredictionError history = NOTEBOOK_ERRORS.get("history");
        PredictionError gbt = NOTEBOOK_ERRORS.get("gbt");
        // History mixes 2-hour day sessions with 12-hour nights; the trees split on the hour of submission.
        assertThat(history.medianAbsLogError()).as(history.toString()).isGreaterThan(0.6);
        assertThat(gbt.medianAbsLogError()).as(gbt.toString()).isLessThan(0.45);
        assertThat(gbt.within2x()).isGreaterThan(history.within2x() + 0.3);
    }

    @Test
    void historyKnowsTrainingRunsFromEvaluationsOfTheSameUser() {
        HistoryPredictor h = HistoryPredictor.standard(DEFAULT_MS);
        HistoryReplay.replay(h, train);
        JobSpec trainRun = JobSpec.builder("new-train").user("user3").tenant("team0").name("train-llama-run9999").gpus(8).build();
        JobSpec evalRun = JobSpec.builder("new-eval").user("user3").tenant("team0").name("eval-llama-a1b2c3d4").gpus(1).build();
        assertThat(h.predictMs(trainRun) / (double) h.predictMs(evalRun)).isBetween(60.0, 240.0);   // 10 h / 5 min = 120
        assertThat(h.answer(trainRun).level()).isEqualTo(1);   // an unseen run number: the user's name template
    }

    @Test
    void historyLearnsANewUserOnline() {
        HistoryPredictor h = HistoryPredictor.standard(DEFAULT_MS);
        HistoryReplay.replay(h, train);
        JobSpec job = JobSpec.builder("x0").user("newcomer").tenant("team9").name("render-scene7").gpus(1).build();
        long before = h.predictMs(job);
        for (int i = 1; i <= 3; i++) {
            h.observe(JobSpec.builder("x" + i).user("newcomer").tenant("team9").name("render-scene" + i).gpus(1).build(), 40_000);
        }
        long after = h.predictMs(JobSpec.builder("x9").user("newcomer").tenant("team9").name("render-scene8").gpus(1).build());
        assertThat(before).isNotEqualTo(40_000);
        assertThat(after).isEqualTo(40_000);
    }

    @Test
    void gbtRetrainsInGrowingBatchesThenEveryThousandJobs() {
        GbtPredictor g = smallGbt();
        List<FinishedJob> jobs = SyntheticHistory.generate(2600, 20, 11);
        HistoryReplay.replay(g, jobs);
        // after 50, 100, 200, 400, 800, 1600 rows, then every 1000: 2600
        assertThat(g.trainings()).isEqualTo(7);
        assertThat(g.trained()).isTrue();
    }

    @Test
    void gbtTrainsInTheBackgroundWithoutStallingItsCallerAndInstallsTheTreesOnItsNextCall() {
        GbtPredictor g = smallGbt();
        java.util.ArrayDeque<Runnable> trainer = new java.util.ArrayDeque<>();   // runs only when the test says so
        g.trainInBackground(trainer::add);
        List<FinishedJob> jobs = SyntheticHistory.generate(400, 20, 11);
        for (int i = 0; i < 60; i++) g.observe(jobs.get(i).spec(), jobs.get(i).runMs());
        // the 50th finished job triggered a training: handed over, not run, and only one at a time
        assertThat(trainer).hasSize(1);
        assertThat(g.trained()).isFalse();
        trainer.poll().run();   // the training thread finishes
        assertThat(g.trained()).as("installed only by the owner's next call").isFalse();
        g.predictMs(JobSpec.builder("probe").user("user3").tenant("team0").name("train-llama-run1").gpus(8).build());
        assertThat(g.trained()).isTrue();
        assertThat(g.trainings()).isEqualTo(1);

        // the 10 rows that finished while it trained count toward the next training (at 100 rows: 50 more)
        for (int i = 60; i < 99; i++) g.observe(jobs.get(i).spec(), jobs.get(i).runMs());
        assertThat(trainer).isEmpty();
        g.observe(jobs.get(99).spec(), jobs.get(99).runMs());
        assertThat(trainer).hasSize(1);
    }

    @Test
    void savedPredictorsPredictTheSameAfterLoadingAndKeepLearning() throws IOException {
        for (PersistentPredictor p : List.of(HistoryPredictor.standard(DEFAULT_MS), smallGbt())) {
            String name = p.name();
            HistoryReplay.replay(p, train);
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            p.save(bytes);
            PersistentPredictor loaded = Predictors.load(new ByteArrayInputStream(bytes.toByteArray()));
            assertThat(loaded.name()).isEqualTo(name);
            assertThat(predict(loaded, test)).as(name).containsExactly(predict(p, test));

            // both keep learning the same way
            List<FinishedJob> more = SyntheticHistory.generate(1100, 20, 99).stream()
                    .map(j -> new FinishedJob(JobSpec.builder("m" + j.spec().id()).user(j.spec().user()).tenant(j.spec().tenant())
                            .name(j.spec().name()).gpus(j.spec().totalGpus()).submitMs(j.spec().submitTimeMs()).build(), j.runMs()))
                    .toList();
            long[] a = HistoryReplay.replay(p, more);
            long[] b = HistoryReplay.replay(loaded, more);
            assertThat(b).as(name).isEqualTo(a);
        }
    }

    @Test
    void aFileThatIsNoSavedPredictorIsRefused() throws IOException {
        assertThatThrownBy(() -> Predictors.load(new ByteArrayInputStream("timestamp,duration\n1,2\n".getBytes())))
                .isInstanceOfSatisfying(SpecException.class, e -> assertThat(e.where()).isEqualTo("saved predictor"));
        PersistentPredictor p = smallGbt();
        HistoryReplay.replay(p, train.subList(0, 200));
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        p.save(bytes);
        byte[] cut = Arrays.copyOf(bytes.toByteArray(), bytes.size() / 2);
        assertThatThrownBy(() -> Predictors.load(new ByteArrayInputStream(cut)))
                .isInstanceOfSatisfying(SpecException.class, e -> assertThat(e.where() + "/" + e.field()).isEqualTo("saved predictor/length"));
        assertThatThrownBy(() -> Predictors.create("oracle", DEFAULT_MS))
                .isInstanceOfSatisfying(SpecException.class, e -> assertThat(e.field()).isEqualTo("name"))
                .hasMessageContaining("global-median, history, gbt");
    }

    @Test
    void aJobsOwnEstimateWinsWhenAsked() {
        HistoryPredictor h = HistoryPredictor.standard(DEFAULT_MS);
        EstimateFirstPredictor p = new EstimateFirstPredictor(h);
        JobSpec withEstimate = JobSpec.builder("e1").user("u").name("x").estimateMs(123_000).build();
        JobSpec without = JobSpec.builder("e2").user("u").name("x").build();
        assertThat(p.predictMs(withEstimate)).isEqualTo(123_000);
        assertThat(p.predictMs(without)).isEqualTo(DEFAULT_MS);
        p.observe(withEstimate, 50_000);
        assertThat(h.predictMs(JobSpec.builder("e3").user("u").name("x").build())).isEqualTo(50_000);
    }

    @Test
    void nameTemplatesBlankNumbersAndHashes() {
        assertThat(JobFeatures.tokens("train-llama2-run17")).containsExactly("train", "llama#", "run#");
        assertThat(JobFeatures.tokens("eval_7f3a9c01")).containsExactly("eval", "#");
        assertThat(JobFeatures.of(JobSpec.builder("j").name("Sweep LR 3e-4").submitMs(4 * 86_400_000L + 5 * 3_600_000L).build()))
                .extracting(JobFeatures::template, JobFeatures::hour, JobFeatures::weekday)
                .containsExactly("sweep-lr-#e-#", 5, 0);   // 1970-01-05 was a Monday
    }
}
