package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;

import java.util.Arrays;
import java.util.Comparator;
import java.util.function.Function;

/**
 * A policy's running jobs in its victim order, as entries kept sorted in an array with their jobs in a second one
 * ({@link RunningBands}, {@link RunningByFinish}): a round copies the jobs in one move, and a start, an end or a
 * changed key moves part of the arrays (a few hundred references) instead of a tree's nodes being walked to list
 * them. The order must be total (ties end at a job's sequence number), and an entry's place in it must not change
 * while it is stored (take it out, change it, put it back; or change every key and {@link #resort}).
 */
final class SortedRunning<E> {
    private final Comparator<E> order;
    private final Function<E, JobState> jobOf;
    private Object[] entries = new Object[16];
    private JobState[] jobs = new JobState[16];
    private int size;

    SortedRunning(Comparator<E> order, Function<E, JobState> jobOf) {
        this.order = order;
        this.jobOf = jobOf;
    }

    int size() { return size; }

    boolean isEmpty() { return size == 0; }

    @SuppressWarnings("unchecked")
    E get(int i) { return (E) entries[i]; }

    void add(E e) {
        int at = -search(e) - 1;   // the order is total: never found
        if (size == entries.length) {
            entries = Arrays.copyOf(entries, 2 * size);
            jobs = Arrays.copyOf(jobs, 2 * size);
        }
        System.arraycopy(entries, at, entries, at + 1, size - at);
        System.arraycopy(jobs, at, jobs, at + 1, size - at);
        entries[at] = e;
        jobs[at] = jobOf.apply(e);
        size++;
    }

    void remove(E e) {
        int at = indexOf(e);
        System.arraycopy(entries, at + 1, entries, at, size - at - 1);
        System.arraycopy(jobs, at + 1, jobs, at, size - at - 1);
        size--;
        entries[size] = null;
        jobs[size] = null;
    }

    /** Where the entry stands in the order as stored (take it before changing its key, for {@link #moved}). */
    int indexOf(E e) {
        int at = search(e);
        if (at < 0) throw new IllegalStateException("job " + jobOf.apply(e).id() + " is not where its key puts it");
        return at;
    }

    /**
     * The entry at {@code at} changed its key: moves it to where the order now puts it, shifting only the entries
     * between its old and new places (a remove and an add would each shift the whole tail).
     */
    @SuppressWarnings("unchecked")
    void moved(int at) {
        E e = get(at);
        int to;
        if (at > 0 && order.compare(get(at - 1), e) > 0) {
            to = -Arrays.binarySearch((E[]) entries, 0, at, e, order) - 1;
            System.arraycopy(entries, to, entries, to + 1, at - to);
            System.arraycopy(jobs, to, jobs, to + 1, at - to);
        } else if (at < size - 1 && order.compare(e, get(at + 1)) > 0) {
            to = -Arrays.binarySearch((E[]) entries, at + 1, size, e, order) - 2;
            System.arraycopy(entries, at + 1, entries, at, to - at);
            System.arraycopy(jobs, at + 1, jobs, at, to - at);
        } else {
            return;
        }
        entries[to] = e;
        jobs[to] = jobOf.apply(e);
    }

    /** Sorts again after every entry's key changed. */
    @SuppressWarnings("unchecked")
    void resort() {
        Arrays.sort((E[]) entries, 0, size, order);
        for (int i = 0; i < size; i++) jobs[i] = jobOf.apply(get(i));
    }

    /** The jobs in order, a copy. */
    JobState[] jobs() { return Arrays.copyOf(jobs, size); }

    @SuppressWarnings("unchecked")
    private int search(E e) {
        return Arrays.binarySearch((E[]) entries, 0, size, e, order);
    }
}
