package io.gpupool.engine;

import org.junit.jupiter.api.Test;

import java.util.Set;

import static io.gpupool.engine.TestPools.A100;
import static io.gpupool.engine.TestPools.T4;
import static io.gpupool.engine.TestPools.job;
import static io.gpupool.engine.TestPools.pool;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** An edit of a pending job's spec keeps its arrival order, wait, hold and group; one that could never run is refused. */
class ReplacePendingTest {

    @Test
    void aRaisedPriorityTakesEffectInTheNextRoundAndTheHoldAndGroupStay() {
        Scheduler s = new Scheduler(pool(1, 1, A100), SchedulerConfig.defaults("priority"));
        s.submit(job("busy", 1).build(), 0);
        s.schedule(0);
        s.submit(job("low", 1).submitMs(1).build(), 1);
        s.submit(job("later", 1).submitMs(2).build(), 2);
        s.capConcurrency("later", "g", 1);
        s.hold("later", "by user");
        assertThat(s.replacePending(job("later", 1).submitMs(2).priority(50).build(), 3).accepted()).isTrue();
        assertThat(s.job("later").spec().priority()).isEqualTo(50);
        assertThat(s.job("later").holdReason()).isEqualTo("by user");
        s.releaseHold("later");
        s.complete("busy", 10);
        assertThat(s.schedule(10).started()).containsExactly("later");
        assertThat(s.runningInGroup("g")).isEqualTo(1);
        s.checkConsistency();
    }

    @Test
    void aSpecThatCouldNeverRunIsRefusedAndTheOldOneStays() {
        Scheduler s = new Scheduler(pool(1, 4, A100), SchedulerConfig.defaults("fcfs"));
        s.submit(job("j", 1).build(), 0);
        s.hold("j", "x");
        SubmitResult r = s.replacePending(job("j", 1).allowedModels(Set.of(T4.id())).build(), 1);
        assertThat(r.accepted()).isFalse();
        assertThat(s.job("j").spec().allowedModels()).isEmpty();
        s.releaseHold("j");
        assertThat(s.schedule(2).started()).containsExactly("j");
        assertThatThrownBy(() -> s.replacePending(job("j", 1).build(), 3)).isInstanceOf(IllegalStateException.class);
    }
}
