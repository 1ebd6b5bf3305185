package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.TreeSet;

/**
 * The pending jobs kept sorted across rounds, for a policy with a {@link StandingOrder#standingOrder}: a job
 * is inserted when it is queued and removed when it starts, so a round walks the queue from its head and
 * pays only for the jobs it looks at, where sorting every pending job each round costs O(n log n) per
 * round (the dominant cost of replaying a long trace with a long queue).
 *
 * <p>During a round the set is not changed under the walk: jobs that start stay in it (the dispatcher skips
 * jobs that are no longer pending) and jobs preempted in the round come back through a side queue, exactly
 * as the per-round queue would poll them; both changes are applied when the round ends.
 */
public final class StandingQueue {
    private final StandingOrder policy;
    private Comparator<JobState> order;
    private TreeSet<JobState> set;
    private long orderVersion;
    private final List<Object[]> deferred = new ArrayList<>();   // {job, Boolean add} in event order
    private boolean inRound;

    public StandingQueue(StandingOrder policy, PolicyContext ctx) {
        this.policy = policy;
        this.order = full(policy.standingOrder(ctx));
        this.set = new TreeSet<>((a, b) -> order.compare(a, b));
        this.orderVersion = policy.orderVersion();
    }

    private static Comparator<JobState> full(Comparator<JobState> c) {
        return c.thenComparingLong(JobState::seq);
    }

    public void add(JobState job) {
        if (inRound) deferred.add(new Object[] {job, Boolean.TRUE});
        else set.add(job);
    }

    public void remove(JobState job) {
        if (inRound) deferred.add(new Object[] {job, Boolean.FALSE});
        else take(job);
    }

    /**
     * Takes a job out of the set. A round starts jobs mostly from the head: polling the head finds it without a
     * comparison, where a search compares about log2(queue) times through the policy's order.
     */
    private void take(JobState job) {
        if (!set.isEmpty() && set.first() == job) set.pollFirst();
        else set.remove(job);
    }

    public int size() { return set.size(); }

    /** The order a round at {@code ctx} walks the queue in, ties to arrival order. */
    public Comparator<JobState> order(PolicyContext ctx) {
        return full(policy.standingOrder(ctx));
    }

    /** This round's queue; call {@link #endRound()} when the round is over. */
    public JobQueue round(PolicyContext ctx) {
        order = full(policy.standingOrder(ctx));
        if (policy.orderVersion() != orderVersion) resort();
        inRound = true;
        Iterator<JobState> walk = set.iterator();
        return new JobQueue() {
            JobState next = walk.hasNext() ? walk.next() : null;
            PriorityQueue<JobState> requeued;   // jobs preempted in this round, tried again in order

            @Override
            public JobState poll() {
                if (requeued != null && !requeued.isEmpty() && (next == null || order.compare(requeued.peek(), next) < 0)) return requeued.poll();
                JobState j = next;
                next = walk.hasNext() ? walk.next() : null;
                return j;
            }

            @Override
            public void requeue(JobState job) {
                if (requeued == null) requeued = new PriorityQueue<>(order);
                requeued.add(job);
            }
        };
    }

    /** The policy's keys changed: the same jobs in a new set built under the new order. */
    private void resort() {
        TreeSet<JobState> fresh = new TreeSet<>((a, b) -> order.compare(a, b));
        fresh.addAll(set);
        set = fresh;
        orderVersion = policy.orderVersion();
    }

    public void endRound() {
        inRound = false;
        for (Object[] op : deferred) {
            if ((Boolean) op[1]) set.add((JobState) op[0]);
            else take((JobState) op[0]);
        }
        deferred.clear();
    }
}
