package io.gpupool.engine;

import io.gpupool.engine.policy.LasPolicy;
import io.gpupool.engine.status.Status;
import io.gpupool.engine.status.Resource;
import io.gpupool.engine.status.Code;
import org.junit.jupiter.api.Test;

import static io.gpupool.engine.RefusalAssert.assertRefusal;
import static io.gpupool.engine.TestPools.A100;
import static io.gpupool.engine.TestPools.job;
import static io.gpupool.engine.TestPools.pool;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A held job keeps its place in the queue but is not placed, never blocks the jobs behind it, and shows why it waits. */
class HoldTest {

    @Test
    void aHeldJobIsPassedOverEvenByStrictFcfsAndStartsInItsTurnOnceReleased() {
        Scheduler s = new Scheduler(pool(1, 4, A100), SchedulerConfig.defaults("fcfs"));
        s.submit(job("first", 2).submitMs(0).build(), 0);
        s.submit(job("second", 2).submitMs(1).build(), 1);
        s.submit(job("third", 2).submitMs(2).build(), 2);
        s.hold("first", "attempt 1 is still stopping on node n0");
        assertThat(s.schedule(10).started()).containsExactly("second", "third");
        assertRefusal(s.job("first").waitStatus(), Code.UNSCHEDULABLE, Status.HOLD, Resource.NONE);
        assertThat(s.job("first").waitReason()).as("names the driver's reason").contains("attempt 1 is still stopping on node n0");
        assertThat(s.job("first").holdReason()).isEqualTo("attempt 1 is still stopping on node n0");

        s.complete("second", 20);
        assertThat(s.schedule(20).started()).as("still held").isEmpty();
        assertThat(s.releaseHold("first")).isTrue();
        assertThat(s.releaseHold("first")).as("not held any more").isFalse();
        assertThat(s.schedule(21).started()).containsExactly("first");
        assertThat(s.job("first").holdReason()).isNull();
        s.checkConsistency();
    }

    @Test
    void releasingAHoldWakesASettledScheduler() {
        // fair-share tries only new arrivals once settled; a released job is not one, yet it must be tried
        Scheduler s = new Scheduler(pool(1, 4, A100), SchedulerConfig.defaults("fair-share"));
        s.submit(job("held", 1).submitMs(0).build(), 0);
        s.hold("held", "test");
        assertThat(s.schedule(0).started()).isEmpty();
        assertThat(s.schedule(1).started()).isEmpty(); // settled
        s.releaseHold("held");
        assertThat(s.schedule(2).started()).containsExactly("held");
    }

    @Test
    void aDriverCanHaveEveryPreemptedJobHeldFromTheMomentItIsPreempted() {
        // las with a 100 GPU-s threshold: "old" has run 200 s on the only GPU, "new" arrives and takes it
        Scheduler s = new Scheduler(pool(1, 1, A100), SchedulerConfig.defaults("las").withPolicyArgs(new LasPolicy.Args(java.util.List.of(100.0))));
        s.holdPreemptedJobs("its attempt is still stopping");
        s.submit(job("old", 1).build(), 0);
        s.schedule(0);
        s.submit(job("new", 1).submitMs(200_000).build(), 200_000);
        RoundResult r = s.schedule(200_000);
        assertThat(r.preempted()).containsExactly("old");
        assertThat(r.started()).containsExactly("new");
        assertThat(s.job("old").holdReason()).isEqualTo("its attempt is still stopping");
        s.complete("new", 300_000);
        assertThat(s.schedule(300_000).started()).as("held: not started in its turn").isEmpty();
        s.releaseHold("old");
        assertThat(s.schedule(300_001).started()).containsExactly("old");
    }

    @Test
    void onlyAPendingJobCanBeHeldAndAHeldOneCannotBeStartedOnANodeEither() {
        Scheduler s = new Scheduler(pool(1, 4, A100), SchedulerConfig.defaults("fcfs"));
        s.submit(job("run", 1).build(), 0);
        s.schedule(0);
        assertThatThrownBy(() -> s.hold("run", "x")).isInstanceOf(IllegalStateException.class).hasMessageContaining("not PENDING");
        s.submit(job("wait", 1).build(), 0);
        s.hold("wait", "reason");
        assertRefusal(s.startOn("wait", s.cluster().node(0).name(), 0).status(), Code.UNSCHEDULABLE, Status.HOLD, Resource.NONE);
        assertThat(s.job("wait").status()).isEqualTo(JobStatus.PENDING);
    }
}
