package io.gpupool.engine.round;

import io.gpupool.engine.JobState;
import io.gpupool.engine.policy.PolicyContext;

import java.util.Collection;

/**
 * Running jobs in the order they are expected to end (ties: arrival order), taken one at a time. An EASY
 * reservation usually needs only the first few ends, so this is a binary heap of indices over a
 * {@code long[]} of end times: O(n) to build instead of sorting every running job in every round.
 */
final class ExpectedEnds {
    /** Shortest time a running job is still expected to take, even when it has overrun its estimate. */
    static final long MIN_REMAINING_MS = 1000;

    private final JobState[] jobs;
    private final long[] end;
    private final int[] heap;
    private int size;
    private int last = -1;
    private final long clampedEndMs;
    private long nextUnclampedEndMs = Long.MAX_VALUE;

    ExpectedEnds(Collection<JobState> running, PolicyContext ctx) {
        long now = ctx.nowMs();
        clampedEndMs = now + MIN_REMAINING_MS;
        jobs = running.toArray(new JobState[0]);
        end = new long[jobs.length];
        heap = new int[jobs.length];
        for (int i = 0; i < jobs.length; i++) {
            end[i] = now + Math.max(MIN_REMAINING_MS, ctx.expectedRuntimeMs(jobs[i]) - jobs[i].attainedMs(now));
            heap[i] = i;
            if (end[i] > clampedEndMs) nextUnclampedEndMs = Math.min(nextUnclampedEndMs, end[i]);
        }
        size = jobs.length;
        for (int i = size / 2 - 1; i >= 0; i--) siftDown(i);
    }

    boolean isEmpty() { return size == 0; }

    /** The next job to end; its expected end is {@link #lastEndMs()}. */
    JobState next() {
        int top = heap[0];
        heap[0] = heap[--size];
        if (size > 0) siftDown(0);
        last = top;
        return jobs[top];
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

    private boolean before(int a, int b) {
        return end[a] != end[b] ? end[a] < end[b] : jobs[a].seq() < jobs[b].seq();
    }

    private void siftDown(int i) {
        int x = heap[i];
        while (true) {
            int c = 2 * i + 1;
            if (c >= size) break;
            if (c + 1 < size && before(heap[c + 1], heap[c])) c++;
            if (!before(heap[c], x)) break;
            heap[i] = heap[c];
            i = c;
        }
        heap[i] = x;
    }
}
