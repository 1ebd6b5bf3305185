package io.gpupool.engine.round;

import io.gpupool.engine.JobState;
import io.gpupool.engine.policy.PolicyContext;

import java.util.Collection;

/**
 * Running jobs in the order they are expected to end (ties: arrival order), taken one at a time. An EASY
 * reservation usually needs only the first end or the first few, so the first is found while the ends are computed
 * and the rest are put in a binary heap only when a second is asked for ({@link EndOrder}): never a sort of every
 * running job in every round.
 */
final class ExpectedEnds {
    /** Shortest time a running job is still expected to take, even when it has overrun its estimate. */
    static final long MIN_REMAINING_MS = 1000;

    private final JobState[] jobs;
    private final long[] end;
    private final EndOrder order;
    private int last = -1;
    private final long clampedEndMs;
    private long nextUnclampedEndMs = Long.MAX_VALUE;

    /** The ends of the running jobs the terms keep, or, when they do not keep exactly {@code running}, computed from each job. */
    ExpectedEnds(Collection<JobState> running, RunningTerms terms, PolicyContext ctx) {
        long now = ctx.nowMs();
        clampedEndMs = now + MIN_REMAINING_MS;
        long[] seq;
        int n;
        if (terms.size() == running.size()) {
            // the terms' arrays as they are (nothing starts or ends while a reservation is worked out) and their scratch
            n = terms.size();
            jobs = terms.jobs();
            seq = terms.seqs();
            end = terms.fillEnds(ctx);
            order = new EndOrder(end, seq, n, terms.heapScratch());
        } else {
            jobs = running.toArray(new JobState[0]);
            n = jobs.length;
            end = new long[n];
            seq = new long[n];
            for (int i = 0; i < n; i++) {
                end[i] = now + Math.max(MIN_REMAINING_MS, ctx.expectedRuntimeMs(jobs[i]) - jobs[i].attainedMs(now));
                seq[i] = jobs[i].seq();
            }
            order = new EndOrder(end, seq);
        }
        for (int i = 0; i < n; i++) if (end[i] > clampedEndMs) nextUnclampedEndMs = Math.min(nextUnclampedEndMs, end[i]);
    }

    boolean isEmpty() { return order.isEmpty(); }

    /** The next job to end; its expected end is {@link #lastEndMs()}. */
    JobState next() {
        last = order.next();
        return jobs[last];
    }

    /** Expected end of the job {@link #next()} returned last. */
    long lastEndMs() { return end[last]; }

    /**
     * The same end as a fixed time, valid at any later instant as {@code max(now + MIN_REMAINING_MS, it)}: the end
     * itself when the job is expected to end later than the clamp, else Long.MIN_VALUE (clamped, it moves with now).
     * A running job's expected end, {@code now + max(MIN, expected - attained(now))}, is {@code max(now + MIN, F)} with
     * {@code F = expected - attainedBefore + runStart} fixed while it runs.
     */
    long lastFixedEndMs() { return end[last] > clampedEndMs ? end[last] : Long.MIN_VALUE; }

    /** The earliest expected end that is not clamped (Long.MAX_VALUE: none): the order holds until the clamp reaches it. */
    long nextUnclampedEndMs() { return nextUnclampedEndMs; }
}
