package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;
import org.junit.jupiter.api.Test;

import java.util.Collection;
import java.util.Comparator;

import static io.gpupool.engine.policy.PolicyTraits.Trait.ALLOWED_VICTIMS_COME_FIRST;
import static io.gpupool.engine.policy.PolicyTraits.Trait.LATER_JOBS_MAY_PREEMPT_LESS;
import static io.gpupool.engine.policy.PolicyTraits.Trait.ARRIVALS_ONLY_WHEN_SETTLED;
import static io.gpupool.engine.policy.PolicyTraits.Trait.NEEDS_ORACLE;
import static io.gpupool.engine.policy.PolicyTraits.Trait.PREEMPTIVE;
import static io.gpupool.engine.policy.PolicyTraits.Trait.STANDING_ORDER;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Each policy's declared traits, and the check that holds a policy to what it declares. */
class PolicyTraitsTest {

    @Test
    void theBuiltInPoliciesDeclareTheirCharacteristics() {
        assertThat(PolicyRegistry.create("fcfs").traits()).isEqualTo(PolicyTraits.of(BlockingMode.STRICT, STANDING_ORDER));
        assertThat(PolicyRegistry.create("fcfs-backfill").traits().blocking()).isEqualTo(BlockingMode.BACKFILL);
        assertThat(PolicyRegistry.create("priority").traits().flags()).containsExactly(STANDING_ORDER);
        assertThat(PolicyRegistry.create("fair-share").traits().flags()).containsExactlyInAnyOrder(PREEMPTIVE, ARRIVALS_ONLY_WHEN_SETTLED);
        assertThat(PolicyRegistry.create("qssf").traits().flags()).containsExactly(ARRIVALS_ONLY_WHEN_SETTLED);
        assertThat(PolicyRegistry.create("las").traits().flags()).containsExactlyInAnyOrder(PREEMPTIVE, STANDING_ORDER, ALLOWED_VICTIMS_COME_FIRST,
                LATER_JOBS_MAY_PREEMPT_LESS);
        assertThat(PolicyRegistry.create("srtf-oracle").traits().has(LATER_JOBS_MAY_PREEMPT_LESS)).isTrue();
        assertThat(PolicyRegistry.create("srtf-oracle").traits().has(NEEDS_ORACLE)).isTrue();
        assertThat(PolicyRegistry.create("themis").traits()).isEqualTo(PolicyTraits.backfill(PolicyArgs.DEFAULT_BACKFILL_DEPTH));
        assertThat(PolicyRegistry.create("fair-share")).isInstanceOf(Admission.class).isInstanceOf(Preemption.class);
    }

    /** A policy that says it preempts but has no preemption rule, or has one it does not declare. */
    private record Declared(PolicyTraits traits) implements QueuePolicy {
        @Override public String name() { return "test"; }
        @Override public JobQueue queue(PolicyContext ctx, Collection<JobState> pending) { return JobQueue.sorted(pending, Comparator.comparingLong(JobState::seq)); }
    }

    private record Preempting(PolicyTraits traits) implements QueuePolicy, Preemption {
        @Override public String name() { return "test"; }
        @Override public JobQueue queue(PolicyContext ctx, Collection<JobState> pending) { return JobQueue.sorted(pending, Comparator.comparingLong(JobState::seq)); }
        @Override public boolean mayPreempt(PolicyContext ctx, JobState job, JobState victim) { return true; }
    }

    @Test
    void aDeclarationThatDisagreesWithTheInterfacesIsRefused() {
        assertThatThrownBy(() -> PolicyTraits.check(new Declared(PolicyTraits.of(BlockingMode.SKIP, PREEMPTIVE))))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("PREEMPTIVE");
        assertThatThrownBy(() -> PolicyTraits.check(new Preempting(PolicyTraits.of(BlockingMode.SKIP))))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("PREEMPTIVE");
        assertThatThrownBy(() -> PolicyTraits.check(new Declared(PolicyTraits.of(BlockingMode.SKIP, STANDING_ORDER))))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("STANDING_ORDER");
        assertThatThrownBy(() -> PolicyTraits.check(new Declared(PolicyTraits.of(BlockingMode.SKIP, ALLOWED_VICTIMS_COME_FIRST))))
                .isInstanceOf(IllegalStateException.class);
        PolicyTraits.check(new Preempting(PolicyTraits.of(BlockingMode.SKIP, PREEMPTIVE, ALLOWED_VICTIMS_COME_FIRST)));
    }

    /** A policy that says its rounds may be quiet (the rule itself does not matter here). */
    private record Quiet(PolicyTraits traits) implements QueuePolicy, StandingOrder, Preemption, QuietRounds {
        @Override public String name() { return "test"; }
        @Override public Comparator<JobState> standingOrder(PolicyContext ctx) { return Comparator.comparingLong(JobState::seq); }
        @Override public boolean mayPreempt(PolicyContext ctx, JobState job, JobState victim) { return false; }
        @Override public boolean mayDecideOtherwise(PolicyContext ctx, JobState first, int victimsTried) { return true; }
    }

    private record QuietWithoutPreemption(PolicyTraits traits) implements QueuePolicy, StandingOrder, QuietRounds {
        @Override public String name() { return "test"; }
        @Override public Comparator<JobState> standingOrder(PolicyContext ctx) { return Comparator.comparingLong(JobState::seq); }
        @Override public boolean mayDecideOtherwise(PolicyContext ctx, JobState first, int victimsTried) { return true; }
    }

    /** Quiet rounds rest on a kept queue, a preemption rule and refusals that do not move with time (no EASY reservation). */
    @Test
    void quietRoundsNeedAStandingOrderPreemptionAndNoBackfill() {
        assertThat(PolicyRegistry.create("gittins")).isInstanceOf(QuietRounds.class);
        PolicyTraits.check(new Quiet(PolicyTraits.of(BlockingMode.SKIP, PREEMPTIVE, STANDING_ORDER)));
        assertThatThrownBy(() -> PolicyTraits.check(new QuietWithoutPreemption(PolicyTraits.of(BlockingMode.SKIP, STANDING_ORDER))))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("implements QuietRounds without PREEMPTIVE");
        assertThatThrownBy(() -> PolicyTraits.check(new Quiet(PolicyTraits.backfill(4, PREEMPTIVE, STANDING_ORDER))))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("BACKFILL");
    }
}
