package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;

import java.util.Collection;
import java.util.Comparator;
import java.util.PriorityQueue;

/** The pending jobs of one round in the order a policy wants them tried. */
public interface JobQueue {
    /** The next job to try, or null when none is left. */
    JobState poll();

    /** A job polled from this queue has started (dynamic orders, such as fair share, re-rank). */
    default void started(JobState job) {}

    /** A job was preempted in this round and may be tried again. */
    void requeue(JobState job);

    /**
     * The jobs of this shape still to come need not be polled in this round (each would only be refused as the last
     * one was): true when the queue passes them over, false when it polls them as before (the default). Jobs
     * preempted in the round are polled whatever their shape.
     */
    default boolean passOver(String shapeKey) {
        return false;
    }

    /**
     * Polls the passed-over shapes again from here on: their jobs ordered before the last job polled go to
     * {@code passedOver} first, in order (the dispatcher gives them the refusal they were passed over with).
     */
    default void resumePassedOver(java.util.function.Consumer<JobState> passedOver) {}

    /** A queue by a number per job, lowest first ({@code descending}: highest first); ties go to arrival order. */
    static JobQueue byKey(Collection<JobState> jobs, java.util.function.ToDoubleFunction<JobState> key, boolean descending) {
        return KeyedQueue.of(jobs, key, descending, new KeyedQueue.Scratch());   // arrays of its own
    }

    /**
     * A queue of {@code jobs[0..count)}, already in the policy's order (the array becomes the queue's); a job preempted
     * in the round is merged in by {@code order} (ties to arrival order), which must agree with the array's.
     */
    static JobQueue inOrder(JobState[] jobs, int count, Comparator<JobState> order) {
        Comparator<JobState> full = order.thenComparingLong(JobState::seq);
        return new JobQueue() {
            int next;
            PriorityQueue<JobState> requeued;

            @Override
            public JobState poll() {
                JobState head = next < count ? jobs[next] : null;
                if (requeued != null && !requeued.isEmpty() && (head == null || full.compare(requeued.peek(), head) < 0)) return requeued.poll();
                if (head != null) next++;
                return head;
            }

            @Override
            public void requeue(JobState job) {
                if (requeued == null) requeued = new PriorityQueue<>(full);
                requeued.add(job);
            }
        };
    }

    /** A queue in a fixed order; ties go to arrival order. */
    static JobQueue sorted(Collection<JobState> jobs, Comparator<JobState> order) {
        Comparator<JobState> full = order.thenComparingLong(JobState::seq);
        PriorityQueue<JobState> pq = new PriorityQueue<>(Math.max(1, jobs.size()), full);
        pq.addAll(jobs);
        return new JobQueue() {
            @Override public JobState poll() { return pq.poll(); }
            @Override public void requeue(JobState job) { pq.add(job); }
        };
    }
}
