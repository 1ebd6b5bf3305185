package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;
import io.gpupool.engine.Scheduler;
import io.gpupool.engine.SchedulerConfig;
import io.gpupool.engine.TestPools;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What {@link RunningBands} answers for {@link QuietRounds#mayDecideOtherwise}: a waiting job bounded by {@code bound}
 * may stop a running job keyed below it, so a round may decide otherwise than the last one when a key fell below the
 * bound since the last ask, when the keys were recomputed wholesale, when the last ask found more jobs keyed below the
 * bound than the planner tries, and when asked about an earlier moment; a key that rose, or fell but stays at or above
 * the bound, or time passing inside a band, changes nothing. Bands here: 1-GPU jobs, a band per 10 GPU-seconds
 * (10 s), key 10 minus the band (so a key falls by one at each crossing).
 */
class QuietRanksTest {
    private static final RunningBands.Bands TENS = new RunningBands.Bands() {
        @Override public int bandOf(JobState job, long now) { return (int) (job.attainedGpuMs(now) / 10_000); }

        @Override public double upperEdgeGpuSec(int band) { return 10.0 * (band + 1); }

        @Override public double key(JobState job, int band) { return 10 - band; }
    };

    /** Two 1-GPU jobs started at 0 and at 5 s, running on a pool of their own. */
    private static List<JobState> twoRunning() {
        Scheduler s = new Scheduler(TestPools.pool(1, 8, TestPools.A100), SchedulerConfig.defaults("fcfs"));
        s.submit(TestPools.job("early", 1).submitMs(0).build(), 0);
        s.schedule(0);
        s.submit(TestPools.job("late", 1).submitMs(5_000).build(), 5_000);
        s.schedule(5_000);
        return List.of(s.job("early"), s.job("late"));
    }

    private static RunningBands started(List<JobState> jobs) {
        RunningBands bands = new RunningBands(TENS);
        for (JobState j : jobs) bands.started(j);
        return bands;
    }

    @Test
    void aKeyThatFallsBelowTheBoundMayAllowAVictimOnceOnly() {
        RunningBands bands = started(twoRunning());
        assertThat(bands.mayAllowMore(6_000, 9.5, 256)).as("the first ask: nothing noted before it").isTrue();
        assertThat(bands.mayAllowMore(9_000, 9.5, 256)).as("both still in band 0 (key 10)").isFalse();
        // early crosses into band 1 at 10 s: key 9, below a waiting job's bound 9.5
        assertThat(bands.mayAllowMore(10_000, 9.5, 256)).isTrue();
        assertThat(bands.mayAllowMore(11_000, 9.5, 256)).as("asked again with nothing moved since").isFalse();
    }

    @Test
    void aKeyThatFallsButStaysAtOrAboveTheBoundChangesNothing() {
        RunningBands bands = started(twoRunning());
        bands.mayAllowMore(6_000, 9, 256);
        assertThat(bands.mayAllowMore(10_000, 9, 256)).as("early falls to key 9: not below a bound of 9").isFalse();
        assertThat(bands.mayAllowMore(15_000, 9, 256)).as("late falls to key 9 too").isFalse();
        assertThat(bands.mayAllowMore(20_000, 9, 256)).as("early falls to key 8, below 9").isTrue();
    }

    @Test
    void moreJobsBelowTheBoundThanThePlannerTriesMayAllowOthersWithNothingMoved() {
        RunningBands bands = started(twoRunning());
        bands.mayAllowMore(6_000, 11, 1);   // both keyed 10 < 11: two allowed victims, the planner tries one
        assertThat(bands.mayAllowMore(7_000, 11, 1)).as("the last round did not try every allowed victim").isTrue();
        bands.mayAllowMore(8_000, 11, 2);
        assertThat(bands.mayAllowMore(9_000, 11, 2)).as("every allowed victim tried").isFalse();
    }

    @Test
    void keysRecomputedWholesaleOrAnEarlierMomentMayDecideOtherwise() {
        RunningBands bands = started(twoRunning());
        bands.mayAllowMore(6_000, 9.5, 256);
        bands.rekey();
        assertThat(bands.mayAllowMore(7_000, 9.5, 256)).as("after a rekey any key may have moved").isTrue();
        assertThat(bands.mayAllowMore(8_000, 9.5, 256)).isFalse();
        assertThat(bands.mayAllowMore(7_500, 9.5, 256)).as("asked about an earlier moment").isTrue();
    }

    @Test
    void aJobStartedSinceTheLastAskCountsAsAKeyThatMoved() {
        List<JobState> jobs = twoRunning();
        RunningBands bands = started(List.of(jobs.getFirst()));
        bands.mayAllowMore(6_000, 11, 256);
        bands.started(jobs.get(1));
        assertThat(bands.mayAllowMore(7_000, 11, 256)).as("late, keyed 10, below 11").isTrue();
        bands.ended(jobs.get(1));
        assertThat(bands.mayAllowMore(8_000, 11, 256)).as("an end only takes a victim away").isFalse();
    }
}
