package io.gpupool.engine;

import org.junit.jupiter.api.Test;

import static io.gpupool.engine.TestPools.A100;
import static io.gpupool.engine.TestPools.job;
import static io.gpupool.engine.TestPools.pool;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * gittins learns from the jobs that finish, and what it learned decides what a new job may preempt: where most
 * jobs end within minutes, a job that has run an hour is unlikely to end soon and gives way to a newcomer (as LAS
 * would); where every job runs about three hours, a job two hours in is the closest to done and keeps its GPU
 * (where LAS would stop it).
 */
class GittinsPolicyTest {
    /** One GPU; {@code jobs} jobs run one after another, job i for {@code serviceSec.applyAsLong(i)} seconds. */
    private static Scheduler trained(int jobs, java.util.function.IntToLongFunction serviceSec) {
        Scheduler s = new Scheduler(pool(1, 1, A100), SchedulerConfig.defaults("gittins"));
        long now = 0;
        for (int i = 0; i < jobs; i++) {
            String id = "past-" + i;
            assertThat(s.submit(job(id, 1).submitMs(now).build(), now).accepted()).isTrue();
            assertThat(s.schedule(now).started()).containsExactly(id);
            now += serviceSec.applyAsLong(i) * 1000;
            s.complete(id, now);
        }
        return s;
    }

    /** Starts "long" at {@code startMs}, lets it run {@code ranSec}, then submits "new": whether "long" was preempted for it. */
    private static boolean newcomerPreempts(Scheduler s, long startMs, long ranSec) {
        s.submit(job("long", 1).submitMs(startMs).build(), startMs);
        assertThat(s.schedule(startMs).started()).containsExactly("long");
        long at = startMs + ranSec * 1000;
        s.submit(job("new", 1).submitMs(at).build(), at);
        RoundResult r = s.schedule(at);
        s.checkConsistency();
        return r.preempted().contains("long");
    }

    private static long lastEnd(Scheduler s, int jobs) {
        return s.job("past-" + (jobs - 1)).endMs();
    }

    @Test
    void whereMostJobsEndSoonALongRunningJobGivesWayToANewcomer() {
        // 9 in 10 jobs run 2 minutes, 1 in 10 runs 30 hours: a job past 2 minutes is probably one of the long ones
        Scheduler s = trained(300, i -> i % 10 == 0 ? 30 * 3600 : 120);
        assertThat(newcomerPreempts(s, lastEnd(s, 300), 3600)).isTrue();
        assertThat(s.job("new").status()).isEqualTo(JobStatus.RUNNING);
    }

    @Test
    void whereEveryJobRunsAboutThreeHoursAJobTwoHoursInKeepsItsGpu() {
        Scheduler s = trained(300, i -> 3 * 3600 + (i % 7) * 60);
        assertThat(newcomerPreempts(s, lastEnd(s, 300), 2 * 3600)).isFalse();
        assertThat(s.job("long").status()).isEqualTo(JobStatus.RUNNING);
        assertThat(s.job("new").status()).isEqualTo(JobStatus.PENDING);
    }

    @Test
    void lasStopsTheJobTwoHoursInWhateverTheHistory() {
        // the contrast: LAS's default thresholds (1 and 10 GPU-hours) put the 2-hour job in a later queue
        Scheduler s = new Scheduler(pool(1, 1, A100), SchedulerConfig.defaults("las"));
        assertThat(newcomerPreempts(s, 0, 2 * 3600)).isTrue();
    }

    @Test
    void beforeAnythingFinishedTheLeastServedJobGoesFirst() {
        Scheduler s = new Scheduler(pool(1, 1, A100), SchedulerConfig.defaults("gittins"));
        assertThat(newcomerPreempts(s, 0, 600)).isTrue();
    }
}
