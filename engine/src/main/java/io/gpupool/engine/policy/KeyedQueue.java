package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;

import java.util.Arrays;
import java.util.Collection;
import java.util.function.ToDoubleFunction;

/**
 * A round's queue ordered by a number computed once per job (a predicted service, a fairness ratio), ties to arrival
 * order: the keys go into an array and a binary heap of indices is built in O(n), so a round pays O(n) for the order
 * and O(log n) only for each job it actually takes, where a sort by a comparator that looks each key up costs
 * O(n log n) lookups per round. The order is that of {@code Double.compare} on the keys (ascending, or descending),
 * then {@link JobState#seq()}.
 */
final class KeyedQueue extends IndexHeap implements JobQueue {
    private final ToDoubleFunction<JobState> key;
    private final boolean descending;
    private JobState[] jobs;
    private double[] keys;
    private long[] seqs;    // the jobs' arrival order, for ties without reading each job again
    private int count;      // entries in jobs/keys

    /**
     * A queue of {@code jobs[0..count)} whose keys and arrival orders the caller has filled ({@code key} keys a requeued
     * job); the arrays become the queue's for as long as it is used (a caller may lend its scratch for one round's
     * queue), and so does {@code heapBuffer} when it is large enough (null: the heap makes its own).
     */
    KeyedQueue(JobState[] jobs, double[] keys, long[] seqs, int count, ToDoubleFunction<JobState> key, boolean descending,
               int[] heapBuffer) {
        super(count, heapBuffer);
        this.key = key;
        this.descending = descending;
        this.jobs = jobs;
        this.count = count;
        this.keys = keys;
        this.seqs = seqs;
        heapify();
    }

    /**
     * Arrays a policy that builds a keyed queue every round lends to each (one queue in use at a time), so a round
     * allocates none: a round's queue fills only their first entries.
     */
    static final class Scratch {
        JobState[] jobs = new JobState[1];
        double[] keys = new double[1];
        long[] seqs = new long[1];
        int[] heap = new int[1];

        /** Room for n entries (the arrays' contents are not kept when they grow). */
        void fit(int n) {
            if (jobs.length >= n) return;
            int len = Math.max(n, 2 * jobs.length);
            jobs = new JobState[len];
            keys = new double[len];
            seqs = new long[len];
            heap = new int[len];
        }
    }

    /** The queue of {@code pending} by {@code key}, in {@code scratch}'s arrays. */
    static KeyedQueue of(Collection<JobState> pending, ToDoubleFunction<JobState> key, boolean descending, Scratch scratch) {
        int n = pending.size();
        scratch.fit(Math.max(1, n));
        JobState[] jobs = pending.toArray(scratch.jobs);
        for (int i = 0; i < n; i++) {
            scratch.keys[i] = key.applyAsDouble(jobs[i]);
            scratch.seqs[i] = jobs[i].seq();
        }
        return new KeyedQueue(jobs, scratch.keys, scratch.seqs, n, key, descending, scratch.heap);
    }

    @Override
    public JobState poll() {
        return isEmpty() ? null : jobs[takeFirst()];
    }

    @Override
    public void requeue(JobState job) {
        if (count == jobs.length) {
            jobs = Arrays.copyOf(jobs, 2 * count);
            keys = Arrays.copyOf(keys, 2 * count);
            seqs = Arrays.copyOf(seqs, 2 * count);
        }
        jobs[count] = job;
        keys[count] = key.applyAsDouble(job);
        seqs[count] = job.seq();
        add(count++);
    }

    @Override
    protected boolean before(int a, int b) {
        int c = descending ? Double.compare(keys[b], keys[a]) : Double.compare(keys[a], keys[b]);
        return c != 0 ? c < 0 : seqs[a] < seqs[b];
    }
}
