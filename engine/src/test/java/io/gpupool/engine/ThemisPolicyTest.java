package io.gpupool.engine;

import org.junit.jupiter.api.Test;

import static io.gpupool.engine.TestPools.A100;
import static io.gpupool.engine.TestPools.job;
import static io.gpupool.engine.TestPools.pool;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code themis} worked out by hand on one 4-GPU node (C = 4). Every job has an estimate, which the predictor
 * returns as R. rho = (now - submit + R - attained) / (R x max(1, g x N / C)), N = pending + running jobs; the
 * highest rho starts first. Times in seconds.
 */
class ThemisPolicyTest {
    private static final long S = 1000;

    private static Scheduler themis() {
        return new Scheduler(pool(1, 4, A100), SchedulerConfig.defaults("themis"));
    }

    private static void submit(Scheduler s, String id, int gpus, long atSec, long estimateSec) {
        assertThat(s.submit(job(id, gpus).submitMs(atSec * S).estimateSec(estimateSec).build(), atSec * S).accepted()).isTrue();
        s.schedule(atSec * S);
    }

    /**
     * All jobs take the whole node, so they run one after another; with equal g, rho is the response ratio.
     * A (R 100) runs 0..100. B arrives at 10 (R 200), C at 60 (R 50), D at 90 (R 150).
     * <pre>
     * t=100, N=3, T_alone = 3R:  B (90+200)/600 = 0.483   C (40+50)/150 = 0.600   D (10+150)/450 = 0.356  -> C
     * t=150, N=2, T_alone = 2R:  B (140+200)/400 = 0.850                          D (60+150)/300 = 0.700  -> B
     * t=350: D
     * </pre>
     * FCFS would start B, C, D at 100, 300, 350; shortest first (qssf) C, D, B at 100, 150, 300.
     */
    @Test
    void equalGangsGoByResponseRatio() {
        Scheduler s = themis();
        submit(s, "A", 4, 0, 100);
        assertThat(s.job("A").firstStartMs()).isZero();
        submit(s, "B", 4, 10, 200);
        submit(s, "C", 4, 60, 50);
        submit(s, "D", 4, 90, 150);
        s.complete("A", 100 * S);
        assertThat(s.schedule(100 * S).started()).containsExactly("C");
        s.complete("C", 150 * S);
        assertThat(s.schedule(150 * S).started()).containsExactly("B");
        s.complete("B", 350 * S);
        assertThat(s.schedule(350 * S).started()).containsExactly("D");
        assertThat(s.job("C").firstStartMs()).isEqualTo(100 * S);
        assertThat(s.job("B").firstStartMs()).isEqualTo(150 * S);
        assertThat(s.job("D").firstStartMs()).isEqualTo(350 * S);
        s.checkConsistency();
    }

    /**
     * A job that fits in its 1/N share runs at full speed alone, a larger one would be slowed: the small job goes
     * first although it waited less. A (4 GPUs, R 100) runs 0..100; F (4 GPUs, R 100) arrives at 40, E (1 GPU, R 100)
     * at 50.
     * <pre>
     * t=100, N=2, C/N = 2 GPUs:  E g=1: T_alone = 100 x max(1, 0.5) = 100, rho = (50+100)/100 = 1.5
     *                            F g=4: T_alone = 100 x max(1, 2)   = 200, rho = (60+100)/200 = 0.8   -> E
     * </pre>
     * F then does not fit (3 GPUs free) and is reserved from E's expected end, 200, when it starts. FCFS would start F
     * at 100 and E at 200.
     */
    @Test
    void aJobThatFitsItsShareGoesBeforeALargerOneThatWaitedLonger() {
        Scheduler s = themis();
        submit(s, "A", 4, 0, 100);
        submit(s, "F", 4, 40, 100);
        submit(s, "E", 1, 50, 100);
        s.complete("A", 100 * S);
        assertThat(s.schedule(100 * S).started()).containsExactly("E");
        s.complete("E", 200 * S);
        assertThat(s.schedule(200 * S).started()).containsExactly("F");
        assertThat(s.job("F").firstStartMs()).isEqualTo(200 * S);
    }
}
