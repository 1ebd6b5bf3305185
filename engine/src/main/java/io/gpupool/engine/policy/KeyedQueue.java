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
final class KeyedQueue implements JobQueue {
    private final ToDoubleFunction<JobState> key;
    private final boolean descending;
    private JobState[] jobs;
    private double[] keys;
    private int[] heap;
    private int size;       // entries in the heap
    private int count;      // entries in jobs/keys

    KeyedQueue(Collection<JobState> pending, ToDoubleFunction<JobState> key, boolean descending) {
        this.key = key;
        this.descending = descending;
        int n = pending.size();
        jobs = pending.toArray(new JobState[Math.max(1, n)]);
        keys = new double[jobs.length];
        heap = new int[jobs.length];
        for (int i = 0; i < n; i++) {
            keys[i] = key.applyAsDouble(jobs[i]);
            heap[i] = i;
        }
        count = size = n;
        for (int i = size / 2 - 1; i >= 0; i--) siftDown(i);
    }

    @Override
    public JobState poll() {
        if (size == 0) return null;
        int top = heap[0];
        heap[0] = heap[--size];
        if (size > 0) siftDown(0);
        return jobs[top];
    }

    @Override
    public void requeue(JobState job) {
        if (count == jobs.length) {
            jobs = Arrays.copyOf(jobs, 2 * count);
            keys = Arrays.copyOf(keys, 2 * count);
        }
        if (size == heap.length) heap = Arrays.copyOf(heap, 2 * size);
        jobs[count] = job;
        keys[count] = key.applyAsDouble(job);
        heap[size] = count++;
        siftUp(size++);
    }

    private boolean before(int a, int b) {
        int c = descending ? Double.compare(keys[b], keys[a]) : Double.compare(keys[a], keys[b]);
        return c != 0 ? c < 0 : jobs[a].seq() < jobs[b].seq();
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

    private void siftUp(int i) {
        int x = heap[i];
        while (i > 0) {
            int p = (i - 1) / 2;
            if (!before(x, heap[p])) break;
            heap[i] = heap[p];
            i = p;
        }
        heap[i] = x;
    }
}
