package io.gpupool.engine.policy;

import io.gpupool.model.JobSpec;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The history predictor's groups, kept by user and then name: a prediction (asked directly or through a job's view) is
 * the median of the latest run times of the same user's jobs of that name, else of that user's, else of everyone's,
 * else the default, as a reference that keeps each group under its own (user, name) pair computes; with users and
 * names that are each other's prefixes, and one name shared by several users.
 */
class HistoryMedianGroupsTest {
    private record UserName(String user, String name) {}

    private static JobSpec job(String id, String user, String name) {
        return JobSpec.builder(id).gpus(1).user(user).name(name).build();
    }

    private static final String[] USERS = {"a", "ab", "b", "a\u0000b"};
    private static final String[] NAMES = {"", "b", "train", "\u0000b"};

    @Test
    void predictionsReadTheGroupsOfTheJobsUserAndName() {
        for (long seed = 1; seed <= 30; seed++) {
            SplittableRandom rnd = new SplittableRandom(seed);
            HistoryMedianPredictor predictor = new HistoryMedianPredictor(3_600_000);
            Map<UserName, RecentRunTimes> byName = new HashMap<>();
            Map<String, RecentRunTimes> byUser = new HashMap<>();
            RecentRunTimes all = new RecentRunTimes(HistoryMedianPredictor.WINDOW);
            Map<UserName, RuntimePredictor.Prediction> views = new HashMap<>();
            for (int step = 0; step < 600; step++) {
                String user = USERS[rnd.nextInt(USERS.length)], name = NAMES[rnd.nextInt(NAMES.length)];
                if (rnd.nextInt(3) == 0) {
                    long ms = 1000L * rnd.nextInt(1, 500);
                    predictor.observe(job("d" + step, user, name), ms);
                    byName.computeIfAbsent(new UserName(user, name), k -> new RecentRunTimes(HistoryMedianPredictor.WINDOW)).add(ms);
                    byUser.computeIfAbsent(user, k -> new RecentRunTimes(HistoryMedianPredictor.WINDOW)).add(ms);
                    all.add(ms);
                } else {
                    views.computeIfAbsent(new UserName(user, name), k -> predictor.track(job("t", k.user(), k.name())));
                }
                for (String u : USERS) {
                    for (String n : NAMES) {
                        RecentRunTimes r = byName.get(new UserName(u, n));
                        if (r == null) r = byUser.get(u);
                        if (r == null) r = all;
                        long expected = r.size() == 0 ? 3_600_000 : Math.max(1, r.median());
                        assertThat(predictor.predictMs(job("q", u, n))).as("seed %d step %d %s/%s", seed, step, u, n).isEqualTo(expected);
                        RuntimePredictor.Prediction view = views.get(new UserName(u, n));
                        if (view != null) assertThat(view.ms()).as("view, seed %d step %d %s/%s", seed, step, u, n).isEqualTo(expected);
                    }
                }
            }
        }
    }
}
