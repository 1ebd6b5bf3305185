package io.gpupool.engine;

import io.gpupool.engine.policy.LasPolicy;
import io.gpupool.engine.state.GpuGrant;
import io.gpupool.model.GpuShare;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.gpupool.engine.TestPools.A100;
import static io.gpupool.engine.TestPools.job;
import static io.gpupool.engine.TestPools.pool;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Victim choice: the cheapest sufficient set (lowest priority, then least work lost, then fewest GPUs), and
 * no victim that is not needed after all. Uses {@code las} with a 100 GPU-s threshold: jobs that ran 200 s
 * on one GPU are in queue 1, so a new job (queue 0) may preempt them.
 */
class PreemptionTest {
    private static final String NODE = "a100-80gb-0";

    private static Scheduler las(int gpus) {
        return new Scheduler(pool(1, gpus, A100), SchedulerConfig.defaults("las").withPolicyArgs(new LasPolicy.Args(List.of(100.0))));
    }

    private static void submit(Scheduler s, String id, int gpus, int priority, long nowMs) {
        assertThat(s.submit(job(id, gpus).priority(priority).submitMs(nowMs).build(), nowMs).accepted()).isTrue();
    }

    private static int gpuOf(Scheduler s, String id) {
        return s.job(id).allocation().grants().getFirst().gpu();
    }

    @Test
    void theLowestPriorityVictimGoesFirst() {
        Scheduler s = las(2);
        submit(s, "hi", 1, 5, 0);
        submit(s, "lo", 1, 0, 0);
        s.schedule(0);
        submit(s, "new", 1, 0, 200_000);
        RoundResult r = s.schedule(200_000);
        assertThat(r.preempted()).containsExactly("lo");
        assertThat(r.started()).containsExactly("new");
        assertThat(s.job("lo").status()).isEqualTo(JobStatus.PENDING);
        assertThat(s.job("lo").preemptions()).isEqualTo(1);
        s.checkConsistency();
    }

    @Test
    void atEqualPriorityTheJobThatLosesLeastWorkGoesFirst() {
        Scheduler s = las(2);
        submit(s, "old", 1, 0, 0);
        s.schedule(0);
        submit(s, "young", 1, 0, 50_000);
        s.schedule(50_000);
        // at 300 s both are in queue 1 (300 and 250 GPU-s); "young" has run 250 s, "old" 300 s
        submit(s, "new", 1, 0, 300_000);
        assertThat(s.schedule(300_000).preempted()).containsExactly("young");
        // attained service is kept: young resumes with its 250 s
        assertThat(s.job("young").attainedMs(300_000)).isEqualTo(250_000);
    }

    @Test
    void aVictimThatIsNotNeededAfterAllIsSpared() {
        // 4 GPUs: "small" (1 GPU, priority 0) is cheapest but freeing it alone is not enough for a 2-GPU job;
        // "big" (2 GPUs, priority 1) must go, and then "small" is not needed: only "big" is preempted.
        Scheduler s = las(4);
        submit(s, "small", 1, 0, 0);
        submit(s, "big", 2, 1, 0);
        submit(s, "other", 1, 2, 0);
        s.schedule(0);
        submit(s, "new", 2, 0, 200_000);
        RoundResult r = s.schedule(200_000);
        assertThat(r.preempted()).containsExactly("big");
        assertThat(s.job("small").status()).isEqualTo(JobStatus.RUNNING);
        assertThat(s.job("other").status()).isEqualTo(JobStatus.RUNNING);
        s.checkConsistency();
    }

    @Test
    void aJobOnAGpuThatTurnedUnhealthyCanBeSparedAndKeepsItsGrant() {
        // "lo" is the cheapest victim but its GPU turned unhealthy: freeing it does not help, so "hi" is
        // preempted too; then "lo" is given back its grant (it still runs there) and only "hi" goes.
        Scheduler s = las(2);
        submit(s, "lo", 1, 0, 0);
        submit(s, "hi", 1, 5, 0);
        s.schedule(0);
        s.setGpuHealthy(NODE, gpuOf(s, "lo"), false);
        submit(s, "new", 1, 0, 200_000);
        RoundResult r = s.schedule(200_000);
        assertThat(r.preempted()).containsExactly("hi");
        assertThat(r.started()).containsExactly("new");
        assertThat(s.job("lo").status()).isEqualTo(JobStatus.RUNNING);
        GpuGrant g = s.job("new").allocation().grants().getFirst();
        assertThat(s.cluster().node(g.node()).healthy(g.gpu())).isTrue();
        s.checkConsistency();
    }

    @Test
    void aSharedGpuJobTakesAsManyVictimsAsItNeedsAndNoMore() {
        // one GPU shared by three jobs of 0.3, 0.3 and 0.4 (the counts of idle GPUs say nothing for shares, so the
        // planner tries the cheapest victim alone first): a 0.6 job needs two of them gone; "keep" costs most and stays
        Scheduler s = las(1);
        for (String[] j : new String[][] {{"a", "0"}, {"b", "1"}, {"keep", "5"}}) {
            int milli = j[0].equals("keep") ? 400 : 300;
            assertThat(s.submit(job(j[0], 1).share(new GpuShare(milli, 0)).priority(Integer.parseInt(j[1])).submitMs(0).build(), 0).accepted()).isTrue();
        }
        s.schedule(0);
        assertThat(s.runningJobs()).hasSize(3);
        assertThat(s.submit(job("new", 1).share(new GpuShare(600, 0)).submitMs(400_000).build(), 400_000).accepted()).isTrue();
        RoundResult r = s.schedule(400_000);   // 400 s on 0.3 of a GPU: 120 GPU-s, past the threshold
        assertThat(r.preempted()).containsExactlyInAnyOrder("a", "b");
        assertThat(r.started()).containsExactly("new");
        assertThat(s.job("keep").status()).isEqualTo(JobStatus.RUNNING);
        s.checkConsistency();
    }

    @Test
    void noVictimIsStoppedWhenAllTheAllowedOnesTogetherLeaveTooLittle() {
        // 2 GPUs: "old" has run long enough to be a victim, "fresh" has not (queue 0, like the new job): a 2-GPU job
        // could start only with both gone, so nothing is preempted and it waits
        Scheduler s = las(2);
        submit(s, "old", 1, 0, 0);
        s.schedule(0);
        submit(s, "fresh", 1, 0, 150_000);
        s.schedule(150_000);
        submit(s, "new", 2, 0, 200_000);
        RoundResult r = s.schedule(200_000);
        assertThat(r.preempted()).isEmpty();
        assertThat(r.started()).isEmpty();
        assertThat(s.job("old").status()).isEqualTo(JobStatus.RUNNING);
        assertThat(s.job("new").status()).isEqualTo(JobStatus.PENDING);
        s.checkConsistency();
    }
}
