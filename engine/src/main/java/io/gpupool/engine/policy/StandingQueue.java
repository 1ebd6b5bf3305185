package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * The pending jobs kept sorted across rounds, for a policy with a {@link StandingOrder#standingOrder}: a job
 * is inserted when it is queued and removed when it starts, so a round walks the queue from its head and
 * pays only for the jobs it looks at, where sorting every pending job each round costs O(n log n) per
 * round (the dominant cost of replaying a long trace with a long queue).
 *
 * <p>During a round the sets are not changed under the walk: jobs that start stay in them (the dispatcher skips
 * jobs that are no longer pending) and jobs preempted in the round come back through a side queue, exactly
 * as the per-round queue would poll them; both changes are applied when the round ends.
 *
 * <p>For a policy whose rounds may pass over the rest of a refused shape ({@link #linesByShape}) the jobs are kept in
 * one line per shape and a round merges the lines' heads: once a shape is refused, the walk stops polling its line
 * ({@link JobQueue#passOver}). A long queue holds few shapes (three or four in a Philly replay), so a walk that polled
 * some 70 jobs a round to reach every shape's first refusal polls a handful.
 */
public final class StandingQueue {
    private static final String ALL = "";   // the one line of a queue not kept by shape

    private final StandingOrder policy;
    private final boolean byShape;
    private Comparator<JobState> order;
    private final Comparator<JobState> current = (a, b) -> order.compare(a, b);   // the lines' order: this round's
    private final Map<String, TreeSet<JobState>> lines = new HashMap<>();
    private int size;
    private long orderVersion;
    private final List<Object[]> deferred = new ArrayList<>();   // {job, Boolean add} in event order
    private boolean inRound;

    /** @param byShape one line per shape ({@link #linesByShape}), else one line of every job */
    public StandingQueue(StandingOrder policy, PolicyContext ctx, boolean byShape) {
        this.policy = policy;
        this.byShape = byShape;
        this.order = full(policy.standingOrder(ctx));
        this.orderVersion = policy.orderVersion();
    }

    /**
     * Whether a policy's rounds may pass over a refused shape's later jobs, so that its queue is kept by shape: a
     * SKIP policy under which later jobs may preempt less (a refused shape's later jobs are refused alike and preempt
     * nothing). The dispatcher decides per round whether it does ({@code Dispatch}).
     */
    public static boolean linesByShape(PolicyTraits traits) {
        return traits.blocking() == BlockingMode.SKIP && traits.has(PolicyTraits.Trait.LATER_JOBS_MAY_PREEMPT_LESS);
    }

    private static Comparator<JobState> full(Comparator<JobState> c) {
        return c.thenComparingLong(JobState::seq);
    }

    public void add(JobState job) {
        if (inRound) deferred.add(new Object[] {job, Boolean.TRUE});
        else insert(job);
    }

    public void remove(JobState job) {
        if (inRound) deferred.add(new Object[] {job, Boolean.FALSE});
        else take(job);
    }

    private String lineKey(JobState job) {
        return byShape ? job.shapeKey() : ALL;
    }

    private void insert(JobState job) {
        if (lines.computeIfAbsent(lineKey(job), k -> new TreeSet<>(current)).add(job)) size++;
    }

    /**
     * Takes a job out of its line. A round starts jobs mostly from the head: polling the head finds it without a
     * comparison, where a search compares about log2(queue) times through the policy's order.
     */
    private void take(JobState job) {
        String key = lineKey(job);
        TreeSet<JobState> line = lines.get(key);
        if (line == null) return;
        if (!line.isEmpty() && line.first() == job) {
            line.pollFirst();
            size--;
        } else if (line.remove(job)) {
            size--;
        }
        if (line.isEmpty()) lines.remove(key);   // a round walks the lines that hold jobs, not every shape ever queued
    }

    public int size() { return size; }

    /** The order a round at {@code ctx} walks the queue in, ties to arrival order. */
    public Comparator<JobState> order(PolicyContext ctx) {
        return full(policy.standingOrder(ctx));
    }

    /**
     * The first job of the queue in the order of the last round (or of the start, before any round), null when none
     * waits; between rounds. The lines are sorted afresh only at a round whose policy's order version changed.
     */
    public JobState first() {
        JobState first = null;
        for (TreeSet<JobState> line : lines.values()) {
            if (line.isEmpty()) continue;
            JobState head = line.first();
            if (first == null || current.compare(head, first) < 0) first = head;
        }
        return first;
    }

    /** This round's queue; call {@link #endRound()} when the round is over. */
    public JobQueue round(PolicyContext ctx) {
        order = full(policy.standingOrder(ctx));
        if (policy.orderVersion() != orderVersion) resort();
        inRound = true;
        return new Walk();
    }

    /** The policy's keys changed: the same jobs in new lines built under the new order. */
    private void resort() {
        for (Map.Entry<String, TreeSet<JobState>> e : lines.entrySet()) {
            TreeSet<JobState> fresh = new TreeSet<>(current);
            // one by one: addAll from a set with the same comparator object would copy the old order as it stands
            for (JobState j : e.getValue()) fresh.add(j);
            e.setValue(fresh);
        }
        orderVersion = policy.orderVersion();
    }

    public void endRound() {
        inRound = false;
        for (Object[] op : deferred) {
            if ((Boolean) op[1]) insert((JobState) op[0]);
            else take((JobState) op[0]);
        }
        deferred.clear();
    }

    /** One line's place in a round's walk: its next job not yet polled. */
    private static final class Cursor {
        final String shape;
        final Iterator<JobState> rest;
        JobState head;

        Cursor(String shape, Iterator<JobState> rest) {
            this.shape = shape;
            this.rest = rest;
            advance();
        }

        void advance() {
            head = rest.hasNext() ? rest.next() : null;
        }
    }

    /** A round's walk: the lines' heads merged in order (a line kept by shape and passed over is left out), then the jobs preempted in it. */
    private final class Walk implements JobQueue {
        private Cursor[] live = new Cursor[lines.size()];   // lines with a head, the least head first
        private int count;
        private final List<Cursor> passed = new ArrayList<>(2);
        private PriorityQueue<JobState> requeued;           // jobs preempted in this round, tried again in order
        private JobState last;

        Walk() {
            for (Map.Entry<String, TreeSet<JobState>> e : lines.entrySet()) place(new Cursor(e.getKey(), e.getValue().iterator()));
        }

        /** Puts a cursor with a head among the live ones, after every head before its own. */
        private void place(Cursor c) {
            if (count == live.length) live = Arrays.copyOf(live, Math.max(4, 2 * count));
            int i = count++;
            while (i > 0 && order.compare(c.head, live[i - 1].head) < 0) {
                live[i] = live[i - 1];
                i--;
            }
            live[i] = c;
        }

        @Override
        public JobState poll() {
            JobState next = count > 0 ? live[0].head : null;
            if (requeued != null && !requeued.isEmpty() && (next == null || order.compare(requeued.peek(), next) < 0)) return last = requeued.poll();
            if (next == null) return null;
            Cursor c = live[0];
            c.advance();
            count--;
            System.arraycopy(live, 1, live, 0, count);
            live[count] = null;
            if (c.head != null) place(c);
            return last = next;
        }

        @Override
        public void requeue(JobState job) {
            if (requeued == null) requeued = new PriorityQueue<>(order);
            requeued.add(job);
        }

        @Override
        public boolean passOver(String shapeKey) {
            if (!byShape) return false;
            for (int i = 0; i < count; i++) {
                if (live[i].shape.equals(shapeKey)) {
                    passed.add(live[i]);
                    System.arraycopy(live, i + 1, live, i, count - i - 1);
                    live[--count] = null;
                    return true;
                }
            }
            return false;   // no job of it left to poll but those preempted in this round
        }

        @Override
        public void resumePassedOver(Consumer<JobState> passedOver) {
            for (Cursor c : passed) {
                while (c.head != null && order.compare(c.head, last) < 0) {
                    passedOver.accept(c.head);
                    c.advance();
                }
                if (c.head != null) place(c);
            }
            passed.clear();
        }
    }
}
