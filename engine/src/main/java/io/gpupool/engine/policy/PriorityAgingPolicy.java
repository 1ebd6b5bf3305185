package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;

import java.util.Comparator;

/**
 * Priority with aging: effective priority = priority + agingPerHour x hours waited. The job with the
 * highest effective priority that does not fit gets an EASY reservation, so once a job has aged to the
 * top it starts within the longest remaining run of the jobs holding its GPUs: no starvation.
 * With priorities p_low < p_high and aging rate a, a low job overtakes fresh high jobs after
 * (p_high - p_low) / a hours.
 *
 * <p>The queue is ordered by the effective priority expressed in whole milliseconds of waiting,
 * {@code waited + round(priority x 1 h / a)}: the same order, but in integers, so two jobs whose effective
 * priorities are equal stay equal in every round and go in arrival order (in floating point, the tie of
 * "priority 0 after 1 h 15 min" and "priority 10 after 0 h" at a = 8/h could fall either way and change
 * from round to round).
 */
public final class PriorityAgingPolicy implements QueuePolicy, StandingOrder {
    private static final double HOUR_MS = 3_600_000.0;
    /** Bound on the priority term, so that adding the wait never overflows. */
    private static final double MAX_PRIORITY_MS = 1e18;

    /**
     * @param agingPerHour  effective priority gained per hour of waiting (0 = plain priority)
     * @param backfillDepth queued jobs behind the reserved top job that backfill considers per round
     */
    public record Args(double agingPerHour, int backfillDepth) implements PolicyArgs {
        public static final Args DEFAULTS = new Args(1.0, PolicyArgs.DEFAULT_BACKFILL_DEPTH);

        public Args {
            PolicyArgs.require(agingPerHour >= 0 && Double.isFinite(agingPerHour), "agingPerHour", "must be >= 0, got " + agingPerHour);
            PolicyArgs.requireBackfillDepth(backfillDepth);
        }
    }

    private final double agingPerHour;
    private final PolicyTraits traits;
    private final Comparator<JobState> order;

    public PriorityAgingPolicy(Args args) {
        this.agingPerHour = args.agingPerHour();
        this.traits = PolicyTraits.backfill(args.backfillDepth(), PolicyTraits.Trait.STANDING_ORDER);
        double rate = agingPerHour;
        this.order = rate <= 0 ? Comparator.comparingInt((JobState j) -> -j.spec().priority())
                : Comparator.comparingLong((JobState j) -> -(priorityMs(j, rate) + j.waitOffsetMs()));
    }

    @Override public String name() { return "priority"; }

    @Override public PolicyTraits traits() { return traits; }

    public static double effectivePriority(JobState j, long nowMs, double agingPerHour) {
        return j.spec().priority() + agingPerHour * (j.waitedMs(nowMs) / HOUR_MS);
    }

    /**
     * Effective priority in milliseconds of waiting at aging rate {@code a > 0}: higher goes first. Whole
     * milliseconds, so exact ties are exact.
     */
    public static long agedWaitMs(JobState j, long nowMs, double agingPerHour) {
        return priorityMs(j, agingPerHour) + j.waitedMs(nowMs);
    }

    /** The priority term of {@link #agedWaitMs}, bounded so that adding the wait never overflows. */
    private static long priorityMs(JobState j, double agingPerHour) {
        double priorityMs = Math.rint(j.spec().priority() * HOUR_MS / agingPerHour);
        return (long) Math.max(-MAX_PRIORITY_MS, Math.min(MAX_PRIORITY_MS, priorityMs));
    }

    /**
     * Higher effective priority first. A waiting job's aged wait is {@code priorityMs + waitedMs(now)}, and
     * {@code waitedMs(now) = now + waitOffsetMs()}: every waiting job gains the same {@code now}, so the order is
     * fixed by {@code priorityMs + waitOffsetMs()} between arrivals and kept as a standing queue.
     */
    @Override
    public Comparator<JobState> standingOrder(PolicyContext ctx) {
        return order;
    }
}
