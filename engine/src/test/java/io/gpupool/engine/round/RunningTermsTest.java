package io.gpupool.engine.round;

import io.gpupool.engine.JobState;
import io.gpupool.engine.Scheduler;
import io.gpupool.engine.SchedulerConfig;
import io.gpupool.engine.policy.HistoryMedianPredictor;
import io.gpupool.engine.policy.PolicyContext;
import io.gpupool.model.JobSpec;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

import static io.gpupool.engine.TestPools.A100;
import static io.gpupool.engine.TestPools.job;
import static io.gpupool.engine.TestPools.pool;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The expected ends from the running jobs' kept terms ({@link RunningTerms}: predictions read again only where a
 * history learned) are exactly those computed afresh from each running job, in the same order, with the same fixed
 * ends and the same next unclamped end: over random histories of a scheduler's starts, completions the history
 * predictor learns from (users and names shared, some jobs with estimates or time limits, some overrunning their
 * prediction), preemptions (run time before the run) and a change of predictor. If a learned history did not make
 * its jobs' predictions be read again, the stale ends would differ.
 */
class RunningTermsTest {
    @Test
    void keptEndsAreTheEndsComputedAfresh() {
        for (long seed = 1; seed <= 30; seed++) {
            SplittableRandom rnd = new SplittableRandom(seed);
            Scheduler s = new Scheduler(pool(2, 8, A100), SchedulerConfig.defaults("fcfs-backfill"));
            RunningTerms terms = new RunningTerms();
            Set<JobState> told = Collections.newSetFromMap(new IdentityHashMap<>());
            long now = 0;
            int compared = 0;
            for (int step = 0; step < 150; step++) {
                now += rnd.nextInt(1, 120) * 1000L;
                for (int k = rnd.nextInt(0, 4); k > 0; k--) s.submit(spec("j" + step + "-" + k, rnd, now), now);
                List<JobState> running = new ArrayList<>(s.runningJobs());
                if (!running.isEmpty() && rnd.nextInt(2) == 0) s.complete(running.get(rnd.nextInt(running.size())).id(), now);
                else if (!running.isEmpty() && rnd.nextInt(4) == 0) s.preempt(running.get(rnd.nextInt(running.size())).id(), now);
                sync(s, terms, told);
                if (rnd.nextInt(40) == 0) s.setPredictor(new HistoryMedianPredictor(1_800_000));
                s.schedule(now);
                sync(s, terms, told);
                long at = now + rnd.nextInt(0, 60) * 1000L;   // reservations are asked at later instants too
                PolicyContext ctx = new PolicyContext(at, s.config(), s.cluster(), s.ledger(), s.predictor(), null, s.runningJobs());
                if (s.runningJobs().isEmpty()) continue;
                ExpectedEnds kept = new ExpectedEnds(s.runningJobs(), terms, ctx);
                ExpectedEnds afresh = new ExpectedEnds(s.runningJobs(), new RunningTerms(), ctx);   // keeps none: computed per job
                assertThat(kept.nextUnclampedEndMs()).isEqualTo(afresh.nextUnclampedEndMs());
                while (!afresh.isEmpty()) {
                    assertThat(kept.next()).as("seed %d step %d", seed, step).isSameAs(afresh.next());
                    assertThat(kept.lastEndMs()).isEqualTo(afresh.lastEndMs());
                    assertThat(kept.lastFixedEndMs()).isEqualTo(afresh.lastFixedEndMs());
                }
                assertThat(kept.isEmpty()).isTrue();
                compared++;
            }
            assertThat(compared).isGreaterThan(50);
        }
    }

    /** Tells the terms what the scheduler's running set changed to (the scheduler tells its own round the same way). */
    private static void sync(Scheduler s, RunningTerms terms, Set<JobState> told) {
        Set<JobState> now = Collections.newSetFromMap(new IdentityHashMap<>());
        now.addAll(s.runningJobs());
        for (JobState j : List.copyOf(told)) {
            if (!now.contains(j)) {
                terms.ended(j);
                told.remove(j);
            }
        }
        for (JobState j : now) if (told.add(j)) terms.started(j);
    }

    private static JobSpec spec(String id, SplittableRandom rnd, long now) {
        JobSpec.Builder b = job(id, 1 + rnd.nextInt(4)).submitMs(now).user("u" + rnd.nextInt(3)).name("n" + rnd.nextInt(3));
        if (rnd.nextInt(5) == 0) b.estimateMs(1000L * rnd.nextInt(1, 600));
        if (rnd.nextInt(5) == 0) b.timeLimitMs(1000L * rnd.nextInt(1, 600));
        return b.build();
    }
}
