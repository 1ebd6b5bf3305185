package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * A band-ranked preemptive policy's running jobs (las's queues, gittins' service levels) kept across rounds in its victim
 * order (lowest key first, then the cheapest: lowest priority, latest run start, fewest GPUs, latest arrival) and by
 * when each next crosses its band's upper edge. A job's band is set by its attained GPU-time and its key by its band
 * (and, for gittins, by the policy's index table: {@link #rekey} after the table changes). Every part of that order
 * but the key is fixed while a job runs (its work lost, now - run start, ranks as the run start does), and its band
 * changes only when its attained GPU-time crosses an edge: a query at {@code now} first recomputes, exactly as the
 * plain code does ({@link Bands#bandOf}), every job whose next crossing is due by {@code now} + {@link #MARGIN_MS};
 * every other job is more than the margin away from its crossing, so its band is still the one stored. The crossing
 * times are {@link EdgeCrossings#crossingMs} as of when they were computed: a job's crossing moves with the time it is
 * computed at only by rounding (well under a millisecond, plus one for the ceiling), which is what the margin covers.
 * Queries must not go back in time (the caller falls back to the plain computation).
 */
final class RunningBands {
    /** What the policy ranks by. */
    interface Bands {
        /** The job's band at {@code now} (what the plain code computes). */
        int bandOf(JobState job, long now);

        /** The attained GPU-seconds at which a job leaves the band; infinite for the last band. */
        double upperEdgeGpuSec(int band);

        /** The victim-order key of a job in a band: lowest first. */
        double key(JobState job, int band);
    }

    /** Far more than the rounding of a crossing time: a crossing this close is recomputed, never trusted. */
    static final long MARGIN_MS = 1000;

    private static final class Entry extends CrossingHeap.Item {   // its crossing: Long.MAX_VALUE for none (the last band, or no GPUs)
        final JobState job;
        final long runStartMs;   // the job's, stored: the scheduler clears it before telling that the run ended
        final int priority;      // the job's, stored for the victim order's comparisons, as its size and sequence
        final double gpuUnits;
        final long seq;
        int band;
        double key;

        Entry(JobState job) {
            this.job = job;
            this.runStartMs = job.runStartMs();
            this.priority = job.spec().priority();
            this.gpuUnits = job.gpuUnits();
            this.seq = job.seq();
        }
    }

    /** The victim order with the key as stored: run start latest first is work lost least first. */
    private static final Comparator<Entry> VICTIM_ORDER = (a, b) -> {   // one comparison, no chain of lambdas
        int c = Double.compare(a.key, b.key);
        if (c == 0) c = Integer.compare(a.priority, b.priority);
        if (c == 0) c = Long.compare(b.runStartMs, a.runStartMs);
        if (c == 0) c = Double.compare(a.gpuUnits, b.gpuUnits);
        return c != 0 ? c : Long.compare(b.seq, a.seq);
    };

    private final Bands bands;
    private final Map<JobState, Entry> entries = new IdentityHashMap<>();
    private final List<Entry> unkeyed = new ArrayList<>();   // started since the last query: no band computed yet
    private final SortedRunning<Entry> byVictimOrder = new SortedRunning<>(VICTIM_ORDER, e -> e.job);
    private final CrossingHeap<Entry> byCrossing = new CrossingHeap<>();
    private final List<Entry> near = new ArrayList<>();   // nextCrossing's scratch: the entries near the earliest
    private final List<Entry> due = new ArrayList<>();    // keyAt's scratch: the entries it keys
    private long keyedAtMs = Long.MIN_VALUE;
    private boolean keysChanged;
    private List<JobState> ordered;   // a copy of byVictimOrder's jobs, null when it changed since (also when a key did)
    // since the last mayAllowMore: the lowest key a job's key fell to or a started job got (-infinity after a rekey)
    private double lowestFall = Double.POSITIVE_INFINITY;
    private boolean allTriedAtLastAsk;   // at the last mayAllowMore every job keyed below its bound was within the tried

    RunningBands(Bands bands) {
        this.bands = bands;
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

    /** The key of a band may have changed for any job (the policy's table did): every key is recomputed at the next query. */
    void rekey() {
        keysChanged = true;
    }

    /** Every running job in victim order at {@code now}; null when {@code now} is before the last query. */
    List<JobState> inVictimOrder(long now) {
        if (!keyAt(now)) return null;
        if (ordered == null) ordered = Arrays.asList(byVictimOrder.jobs());
        return ordered;
    }

    /**
     * Whether {@code list} is the one {@link #inVictimOrder} last gave and nothing changed since: every rekey, due job,
     * start and end drops that list, so then {@link #storedKey} reads its jobs' keys by position.
     */
    boolean stillGives(List<JobState> list) {
        return list == ordered;
    }

    /** The stored key of the i-th job in victim order (see {@link #stillGives}). */
    double storedKey(int i) {
        return byVictimOrder.get(i).key;
    }

    /** The band of the first running job in victim order at {@code now}, or {@code ifNone} when none runs; null when {@code now} is before the last query. */
    Integer firstBand(long now, int ifNone) {
        if (!keyAt(now)) return null;
        return byVictimOrder.isEmpty() ? ifNone : byVictimOrder.get(0).band;
    }

    /** The lowest key of a running job at {@code now} (infinite when none runs); NaN when {@code now} is before the last query. */
    double lowestKey(long now) {
        if (!keyAt(now)) return Double.NaN;
        return byVictimOrder.isEmpty() ? Double.POSITIVE_INFINITY : byVictimOrder.get(0).key;
    }

    /**
     * {@link EdgeCrossings#next} at {@code now}, computed exactly for the jobs whose stored crossing is within the
     * margin of the earliest (no other can be the earliest); null when {@code now} is before the last query.
     */
    OptionalLong nextCrossing(long now) {
        if (!keyAt(now)) return null;
        if (byCrossing.isEmpty() || byCrossing.first().crossingMs == Long.MAX_VALUE) return OptionalLong.empty();
        long bound = plus(byCrossing.first().crossingMs, MARGIN_MS);
        long best = Long.MAX_VALUE;
        near.clear();
        byCrossing.collectDue(bound, near);
        for (int i = 0; i < near.size(); i++) {
            Entry e = near.get(i);
            if (e.crossingMs == Long.MAX_VALUE) continue;
            double edge = bands.upperEdgeGpuSec(bands.bandOf(e.job, now));
            if (!Double.isInfinite(edge)) best = Math.min(best, EdgeCrossings.crossingMs(e.job, edge, now));
        }
        return best == Long.MAX_VALUE ? OptionalLong.empty() : OptionalLong.of(best);
    }

    /**
     * {@link QuietRounds#mayDecideOtherwise} for a policy whose waiting jobs may stop running jobs keyed below their
     * bound, {@code bound} being the highest a waiting job has now: whether, since the last ask, a job's key fell below
     * it (a job may now be stopped that could not be then), or at the last ask more jobs were keyed below it than the
     * planner tries for one job (the round then did not try every allowed victim). Notes where the keys stand for the
     * next ask; true when {@code now} is before the last query.
     */
    boolean mayAllowMore(long now, double bound, int victimsTried) {
        boolean allTriedBefore = allTriedAtLastAsk;
        boolean inOrder = keyAt(now);
        double fell = lowestFall;
        lowestFall = Double.POSITIVE_INFINITY;
        allTriedAtLastAsk = inOrder && keyedBelow(bound) <= victimsTried;
        return !inOrder || !allTriedBefore || fell < bound;
    }

    /** How many running jobs are keyed below {@code bound} (the victim order begins with the lowest key). */
    private int keyedBelow(double bound) {
        int lo = 0, hi = byVictimOrder.size();
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (byVictimOrder.get(mid).key < bound) lo = mid + 1;
            else hi = mid;
        }
        return lo;
    }

    /**
     * Computes the band of the jobs started since the last query and of those whose crossing is due by now + the
     * margin, and every key after {@link #rekey}.
     */
    private boolean keyAt(long now) {
        if (now < keyedAtMs) return false;
        keyedAtMs = now;
        if (keysChanged) {
            keysChanged = false;
            lowestFall = Double.NEGATIVE_INFINITY;   // any key may have moved anywhere
            for (int i = 0; i < byVictimOrder.size(); i++) {
                Entry e = byVictimOrder.get(i);
                e.key = bands.key(e.job, e.band);
            }
            byVictimOrder.resort();
            ordered = null;
        }
        long horizon = plus(now, MARGIN_MS);
        // most queries find nothing due (several per round at one instant): no list made for them
        if (unkeyed.isEmpty() && (byCrossing.isEmpty() || byCrossing.first().crossingMs > horizon)) return true;
        due.clear();
        due.addAll(unkeyed);   // the newly started first, in neither set yet
        int newlyStarted = due.size();
        unkeyed.clear();
        byCrossing.collectDue(horizon, due);
        for (int i = 0; i < due.size(); i++) {
            Entry e = due.get(i);
            boolean keyed = i >= newlyStarted;   // in both sets already, under its old key
            int at = keyed ? byVictimOrder.indexOf(e) : -1;
            double before = keyed ? e.key : Double.POSITIVE_INFINITY;   // a start counts as a fall
            e.band = bands.bandOf(e.job, now);
            e.key = bands.key(e.job, e.band);
            if (e.key < before) lowestFall = Math.min(lowestFall, e.key);
            double edge = bands.upperEdgeGpuSec(e.band);
            e.crossingMs = !Double.isInfinite(edge) && e.gpuUnits > 0 ? EdgeCrossings.crossingMs(e.job, edge, now) : Long.MAX_VALUE;
            if (keyed) {
                byVictimOrder.moved(at);
                byCrossing.changed(e);
            } else {
                byVictimOrder.add(e);
                byCrossing.add(e);
            }
        }
        if (!due.isEmpty()) ordered = null;
        return true;
    }

    private static long plus(long t, long d) {
        return t > Long.MAX_VALUE - d ? Long.MAX_VALUE : t + d;
    }
}
