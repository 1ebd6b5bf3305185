package io.gpupool.engine;

import io.gpupool.engine.policy.LasPolicy;
import io.gpupool.engine.state.GpuGrant;
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
}
