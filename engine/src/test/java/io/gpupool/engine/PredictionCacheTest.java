package io.gpupool.engine;

import io.gpupool.engine.policy.HistoryMedianPredictor;
import io.gpupool.engine.policy.RuntimePredictor;
import io.gpupool.model.JobSpec;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static io.gpupool.engine.TestPools.job;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A job's prediction, kept while the predictor's version stands and then while its own view's version does (only the
 * histories it reads learned nothing), is at every moment what the predictor answers now (capped by the job's time
 * limit): over random histories of completions the history predictor learns from, with jobs that share a user and
 * name, a user, or nothing; and a predictor that cannot tell when it changed is asked every time.
 */
class PredictionCacheTest {
    @Test
    void theKeptPredictionIsThePredictorsAnswerNow() {
        for (long seed = 1; seed <= 50; seed++) {
            SplittableRandom rnd = new SplittableRandom(seed);
            HistoryMedianPredictor predictor = new HistoryMedianPredictor(3_600_000);
            JobState.RoundNote note = new JobState.RoundNote();
            List<JobState> jobs = new ArrayList<>();
            for (int step = 0; step < 400; step++) {
                int op = rnd.nextInt(3);
                if (op == 0 || jobs.isEmpty()) {
                    JobSpec.Builder b = job("j" + step, 1).user("u" + rnd.nextInt(4)).name("n" + rnd.nextInt(3));
                    if (rnd.nextInt(4) == 0) b.timeLimitMs(1000L * rnd.nextInt(1, 200));
                    jobs.add(new JobState(b.build(), step, 0, note));
                } else if (op == 1) {
                    // a completion: the predictor learns (a run of 0 ms teaches nothing and keeps the version)
                    JobSpec done = job("d" + step, 1).user("u" + rnd.nextInt(5)).name("n" + rnd.nextInt(4)).build();
                    predictor.observe(done, rnd.nextInt(8) == 0 ? 0 : 1000L * rnd.nextInt(1, 300));
                }
                for (JobState j : jobs) {
                    long expected = predictor.predictMs(j.spec());
                    if (j.spec().timeLimitMs().isPresent()) expected = Math.min(expected, j.spec().timeLimitMs().getAsLong());
                    assertThat(j.predictedRuntimeMs(predictor)).as("seed %d step %d %s", seed, step, j.id()).isEqualTo(expected);
                }
            }
        }
    }

    @Test
    void aPredictorWithoutAVersionIsAskedEveryTime() {
        RuntimePredictor changing = new RuntimePredictor() {
            long calls;

            @Override public String name() { return "changing"; }

            @Override public long predictMs(JobSpec job) { return 1000 + calls++; }

            @Override public void observe(JobSpec job, long runMs) {}
        };
        JobState j = new JobState(job("j", 1).build(), 0, 0, new JobState.RoundNote());
        assertThat(j.predictedRuntimeMs(changing)).isEqualTo(1000);
        assertThat(j.predictedRuntimeMs(changing)).isEqualTo(1001);
    }
}
