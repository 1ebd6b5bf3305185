package io.gpupool.engine.policy;

import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;

/**
 * What a policy declares about itself, read by the round instead of asking the policy job by job (as Caffeine's
 * simulator declares each policy's characteristics). {@link #check} holds a policy to its declaration.
 *
 * @param blocking      what the round does when the next job in order does not fit
 * @param backfillDepth {@link BlockingMode#BACKFILL}: queued jobs behind a reserved one that backfill considers per
 *                      round (the policy's {@code backfillDepth} setting); 0 for the other modes
 * @param flags         the policy's characteristics; each carries the rule the policy must keep to declare it
 */
public record PolicyTraits(BlockingMode blocking, int backfillDepth, Set<Trait> flags) {

    /** A characteristic the round relies on. */
    public enum Trait {
        /** The policy implements {@link Preemption}: a job that does not fit may stop running jobs it allows. */
        PREEMPTIVE,
        /**
         * The policy implements {@link StandingOrder}: each job's place depends on a key that does not change while
         * it waits, and the standing order is exactly the order of {@link QueueOrder#queue} (ties to arrival order
         * in both).
         */
        STANDING_ORDER,
        /**
         * A round after a settled one (it started and preempted nothing, and since then only jobs arrived, the
         * cluster unchanged) may try only the arrivals: declare it only where a job refused then is refused again
         * whatever the time, because the policy's refusals depend only on the cluster, the ledger's held GPUs and the
         * configuration (its order may change with time: that does not matter when every older job is refused).
         * Not for time-dependent rules: reservations from expected ends, attained service, strict order behind a
         * blocked head.
         */
        ARRIVALS_ONLY_WHEN_SETTLED,
        /**
         * The jobs {@link Preemption#mayPreempt} allows always come first in {@link Preemption#victimOrder}, whatever
         * the preempting job (true where the rule and the order use one measure, as in las and srtf-oracle): the
         * victim search may then stop at the first running job it may not take. Needs {@link #PREEMPTIVE}.
         */
        ALLOWED_VICTIMS_COME_FIRST,
        /**
         * A job later in a round's order may stop only running jobs that every earlier job may stop too (true where the
         * order and the rule use one measure, as in las and srtf-oracle): once no allowed set of victims makes room for
         * a job, none does for a later job of the same shape, whatever its tenant. Needs {@link #PREEMPTIVE}.
         */
        LATER_JOBS_MAY_PREEMPT_LESS,
        /** The policy reads true run times ({@link PolicyContext#oracle()}), which only a simulator knows. */
        NEEDS_ORACLE
    }

    public PolicyTraits {
        if ((blocking == BlockingMode.BACKFILL) != (backfillDepth > 0)) {
            throw new IllegalArgumentException("a backfill depth (>= 1) goes with BACKFILL and only with it, got " + blocking + " " + backfillDepth);
        }
        // an enum set (a bit test per has(): the round asks per job it polls), read-only
        EnumSet<Trait> copy = EnumSet.noneOf(Trait.class);
        copy.addAll(flags);
        flags = Collections.unmodifiableSet(copy);
    }

    /** A policy that stops ({@link BlockingMode#STRICT}) or goes on ({@link BlockingMode#SKIP}) at a job that does not fit. */
    public static PolicyTraits of(BlockingMode blocking, Trait... flags) {
        return new PolicyTraits(blocking, 0, Set.of(flags));
    }

    /** A policy whose first job that does not fit gets an EASY reservation, {@code depth} jobs behind it being tried. */
    public static PolicyTraits backfill(int depth, Trait... flags) {
        return new PolicyTraits(BlockingMode.BACKFILL, depth, Set.of(flags));
    }

    public boolean has(Trait t) {
        return flags.contains(t);
    }

    /**
     * Throws when a policy's declared traits and the interfaces it implements disagree (a programming error,
     * caught when the policy is created).
     */
    public static void check(QueuePolicy p) {
        PolicyTraits t = p.traits();
        String problem = null;
        if (t.blocking() == null) problem = "declares no blocking mode";
        else if (t.has(Trait.PREEMPTIVE) != (p instanceof Preemption)) problem = "must declare PREEMPTIVE exactly when it implements Preemption";
        else if (t.has(Trait.STANDING_ORDER) != (p instanceof StandingOrder)) problem = "must declare STANDING_ORDER exactly when it implements StandingOrder";
        else if (t.has(Trait.ALLOWED_VICTIMS_COME_FIRST) && !t.has(Trait.PREEMPTIVE)) problem = "declares ALLOWED_VICTIMS_COME_FIRST without PREEMPTIVE";
        else if (t.has(Trait.LATER_JOBS_MAY_PREEMPT_LESS) && !t.has(Trait.PREEMPTIVE)) problem = "declares LATER_JOBS_MAY_PREEMPT_LESS without PREEMPTIVE";
        else if (p instanceof QuietRounds && !(t.has(Trait.PREEMPTIVE) && t.has(Trait.STANDING_ORDER))) problem = "implements QuietRounds without PREEMPTIVE and STANDING_ORDER";
        else if (p instanceof QuietRounds && t.blocking() == BlockingMode.BACKFILL) problem = "implements QuietRounds with BACKFILL (a reservation's refusals move with time)";
        if (problem != null) throw new IllegalStateException("policy " + p.name() + " " + problem);
    }
}
