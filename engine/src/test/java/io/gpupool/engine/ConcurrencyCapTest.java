package io.gpupool.engine;

import io.gpupool.engine.status.Code;
import io.gpupool.engine.status.Resource;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import static io.gpupool.engine.RefusalAssert.assertRefusal;
import static io.gpupool.engine.TestPools.A100;
import static io.gpupool.engine.TestPools.job;
import static io.gpupool.engine.TestPools.pool;
import static org.assertj.core.api.Assertions.assertThat;

/** A group's cap (a job array's %N) holds in every policy, never blocks other jobs, and moves with starts and stops. */
class ConcurrencyCapTest {

    @ParameterizedTest
    @ValueSource(strings = {"fcfs", "fcfs-backfill", "priority", "fair-share", "qssf", "las", "themis", "gittins"})
    void atMostCapTasksRunAndTheNextStartsWhenOneEnds(String policy) {
        // 8 free GPUs, 6 one-GPU tasks capped at 2, then a plain job: 2 tasks and the plain job run
        Scheduler s = new Scheduler(pool(1, 8, A100), SchedulerConfig.defaults(policy));
        for (int i = 0; i < 6; i++) {
            s.submit(job("a_" + i, 1).submitMs(i).build(), i);
            s.capConcurrency("a_" + i, "a", 2);
        }
        s.submit(job("plain", 1).submitMs(10).build(), 10);
        assertThat(s.schedule(10).started()).containsExactlyInAnyOrder("a_0", "a_1", "plain");
        assertThat(s.runningInGroup("a")).isEqualTo(2);
        assertRefusal(s.job("a_2").waitStatus(), Code.UNSCHEDULABLE, ConcurrencyCaps.PLUGIN, Resource.NONE);
        assertThat(s.job("a_2").waitStatus().capacity()).isEqualTo(2);

        s.complete("a_0", 20);
        assertThat(s.schedule(20).started()).containsExactly("a_2");
        assertThat(s.runningInGroup("a")).isEqualTo(2);
        s.cancel("a_1", 30);
        assertThat(s.schedule(30).started()).containsExactly("a_3");
        s.checkConsistency();
    }

    @Test
    void aPreemptedTaskFreesItsPlaceAndARestoredRunningOneTakesOne() {
        Scheduler s = new Scheduler(pool(1, 8, A100), SchedulerConfig.defaults("fcfs"));
        s.submit(job("t0", 1).build(), 0);
        s.submit(job("t1", 1).build(), 0);
        s.capConcurrency("t0", "g", 1);
        s.capConcurrency("t1", "g", 1);
        assertThat(s.schedule(0).started()).containsExactly("t0");
        s.preempt("t0", 5);
        assertThat(s.runningInGroup("g")).isZero();
        assertThat(s.schedule(5).started()).containsExactly("t0");

        // a job already running (restored after a restart) counts as soon as it joins
        Scheduler r = new Scheduler(pool(1, 8, A100), SchedulerConfig.defaults("fcfs"));
        r.submit(job("x", 1).build(), 0);
        r.schedule(0);
        r.capConcurrency("x", "h", 1);
        r.submit(job("y", 1).build(), 1);
        r.capConcurrency("y", "h", 1);
        assertThat(r.schedule(1).started()).isEmpty();
        r.complete("x", 2);
        assertThat(r.forget("x")).isTrue();
        assertThat(r.schedule(2).started()).containsExactly("y");
    }
}
