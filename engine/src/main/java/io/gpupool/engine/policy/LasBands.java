package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeSet;

/**
 * las's running jobs kept across rounds in its victim order (highest queue first, then the cheapest: lowest priority,
 * latest run start, fewest GPUs, latest arrival) and by when each next crosses a threshold. Every part of that order
 * but the queue is fixed while a job runs (its work lost, now - run start, ranks as the run start does), and its
 * queue changes only when its attained GPU-time crosses a threshold: a query at {@code now} first recomputes, exactly
 * as the plain code does ({@link LasPolicy#queueOf}), every job whose next crossing is due by {@code now} +
 * {@link #MARGIN_MS}; every other job is more than the margin away from its crossing, so its queue is still the one
 * stored. The crossing times are {@link EdgeCrossings#crossingMs} as of when they were computed: a job's crossing
 * moves with the time it is computed at only by rounding (well under a millisecond, plus one for the ceiling), which
 * is what the margin covers. Queries must not go back in time (the caller falls back to the plain computation).
 */
final class LasBands {
    /** Far more than the rounding of a crossing time: a crossing this close is recomputed, never trusted. */
    static final long MARGIN_MS = 1000;

    private static final class Entry {
        final JobState job;
        final long runStartMs;   // the job's, stored: the scheduler clears it before telling that the run ended
        int band;
        long crossingMs;   // Long.MAX_VALUE: none (the last queue, or no GPUs)

        Entry(JobState job) {
            this.job = job;
            this.runStartMs = job.runStartMs();
        }
    }

    /** las's victim order (LasPolicy#victimOrder) with the queue as stored: run start latest first is work lost least first. */
    private static final Comparator<Entry> VICTIM_ORDER = Comparator.comparingInt((Entry e) -> -e.band)
            .thenComparingInt(e -> e.job.spec().priority())
            .thenComparing((a, b) -> Long.compare(b.runStartMs, a.runStartMs))
            .thenComparingDouble(e -> e.job.gpuUnits())
            .thenComparing((a, b) -> Long.compare(b.job.seq(), a.job.seq()));
    private static final Comparator<Entry> CROSSING_ORDER = Comparator.comparingLong((Entry e) -> e.crossingMs).thenComparingLong(e -> e.job.seq());

    private final double[] thresholds;
    private final Map<JobState, Entry> entries = new IdentityHashMap<>();
    private final List<Entry> unkeyed = new ArrayList<>();   // started since the last query: no queue computed yet
    private final TreeSet<Entry> byVictimOrder = new TreeSet<>(VICTIM_ORDER);
    private final TreeSet<Entry> byCrossing = new TreeSet<>(CROSSING_ORDER);
    private long keyedAtMs = Long.MIN_VALUE;
    private List<JobState> ordered;   // byVictimOrder's jobs, null when it changed since

    LasBands(double[] thresholds) {
        this.thresholds = thresholds;
    }

    void started(JobState job) {
        Entry e = new Entry(job);
        entries.put(job, e);
        unkeyed.add(e);
    }

    void ended(JobState job) {
        Entry e = entries.remove(job);
        if (e == null) return;
        if (!unkeyed.remove(e)) {
            byVictimOrder.remove(e);
            byCrossing.remove(e);
            ordered = null;
        }
    }

    /** Every running job in las's victim order at {@code now}; null when {@code now} is before the last query. */
    List<JobState> inVictimOrder(long now) {
        if (!keyAt(now)) return null;
        if (ordered == null) {
            JobState[] jobs = new JobState[byVictimOrder.size()];
            int i = 0;
            for (Entry e : byVictimOrder) jobs[i++] = e.job;
            ordered = Arrays.asList(jobs);
        }
        return ordered;
    }

    /** The highest queue of a running job at {@code now} (0 when none runs); -1 when {@code now} is before the last query. */
    int highestBand(long now) {
        if (!keyAt(now)) return -1;
        return byVictimOrder.isEmpty() ? 0 : Math.max(0, byVictimOrder.first().band);
    }

    /**
     * {@link EdgeCrossings#next} for las at {@code now}, computed exactly for the jobs whose stored crossing is within
     * the margin of the earliest (no other can be the earliest); null when {@code now} is before the last query.
     */
    OptionalLong nextCrossing(long now) {
        if (!keyAt(now)) return null;
        if (byCrossing.isEmpty() || byCrossing.first().crossingMs == Long.MAX_VALUE) return OptionalLong.empty();
        long bound = plus(byCrossing.first().crossingMs, MARGIN_MS);
        long best = Long.MAX_VALUE;
        for (Entry e : byCrossing) {
            if (e.crossingMs > bound || e.crossingMs == Long.MAX_VALUE) break;
            int q = LasPolicy.queueOf(e.job, now, thresholds);
            if (q < thresholds.length) best = Math.min(best, EdgeCrossings.crossingMs(e.job, thresholds[q], now));
        }
        return best == Long.MAX_VALUE ? OptionalLong.empty() : OptionalLong.of(best);
    }

    /** Computes the queue of the jobs started since the last query and of those whose crossing is due by now + the margin. */
    private boolean keyAt(long now) {
        if (now < keyedAtMs) return false;
        keyedAtMs = now;
        List<Entry> due = new ArrayList<>(unkeyed);   // the newly started first, in neither set yet
        int newlyStarted = due.size();
        unkeyed.clear();
        long horizon = plus(now, MARGIN_MS);
        for (Entry e : byCrossing) {
            if (e.crossingMs > horizon) break;
            due.add(e);
        }
        for (int i = 0; i < due.size(); i++) {
            Entry e = due.get(i);
            if (i >= newlyStarted) {
                byVictimOrder.remove(e);
                byCrossing.remove(e);
            }
            e.band = LasPolicy.queueOf(e.job, now, thresholds);
            e.crossingMs = e.band < thresholds.length && e.job.gpuUnits() > 0 ? EdgeCrossings.crossingMs(e.job, thresholds[e.band], now) : Long.MAX_VALUE;
            byVictimOrder.add(e);
            byCrossing.add(e);
        }
        if (!due.isEmpty()) ordered = null;
        return true;
    }

    private static long plus(long t, long d) {
        return t > Long.MAX_VALUE - d ? Long.MAX_VALUE : t + d;
    }
}
