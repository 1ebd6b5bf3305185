package io.gpupool.engine;

import java.util.AbstractCollection;
import java.util.Arrays;
import java.util.Collection;
import java.util.ConcurrentModificationException;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;

/**
 * Jobs by id in the order they were put, as a {@code LinkedHashMap<String, JobState>} keeps them (a put of an id
 * already present replaces the job in its place), with the jobs in one array: rounds copy the queue or the running
 * jobs into arrays (a policy's keyed queue, the expected ends of an EASY reservation) once per round, and copying
 * an array is far cheaper than walking a linked map's entries. A removal leaves a hole that copies and iterations
 * skip; the array is compacted, in order, when holes outnumber the jobs.
 */
final class JobTable {
    /** Where a job sits in the array (moved by compaction). */
    private static final class Slot {
        int index;

        Slot(int index) { this.index = index; }
    }

    private final Map<String, Slot> byId = new HashMap<>();
    private JobState[] jobs = new JobState[16];
    private Slot[] slots = new Slot[16];
    private int end;        // slots in use, holes included
    private int size;
    private int modCount;
    private final Collection<JobState> values = new Values();

    /** Adds the job at the end, or replaces the job of the same id in its place. */
    void put(JobState job) {
        Slot s = byId.get(job.id());
        if (s != null) {
            jobs[s.index] = job;
            return;
        }
        if (end == jobs.length) {
            if (size < end / 2) {
                compact();
            } else {
                jobs = Arrays.copyOf(jobs, 2 * end);
                slots = Arrays.copyOf(slots, 2 * end);
            }
        }
        s = new Slot(end);
        byId.put(job.id(), s);
        jobs[end] = job;
        slots[end++] = s;
        size++;
        modCount++;
    }

    void remove(String id) {
        Slot s = byId.remove(id);
        if (s == null) return;
        jobs[s.index] = null;
        slots[s.index] = null;
        size--;
        modCount++;
        if (size == 0) {
            end = 0;
        } else if (end - size > Math.max(16, size)) {
            compact();
        }
    }

    boolean isEmpty() { return size == 0; }

    /** A live view in insertion order (as {@code LinkedHashMap.values()}, without removal through it). */
    Collection<JobState> values() { return values; }

    private void compact() {
        int to = 0;
        for (int from = 0; from < end; from++) {
            if (jobs[from] == null) continue;
            jobs[to] = jobs[from];
            slots[to] = slots[from];
            slots[to].index = to;
            to++;
        }
        Arrays.fill(jobs, to, end, null);
        Arrays.fill(slots, to, end, null);
        end = to;
    }

    private final class Values extends AbstractCollection<JobState> {
        @Override public int size() { return size; }

        @Override public boolean isEmpty() { return size == 0; }

        @Override
        public Iterator<JobState> iterator() {
            return new Iterator<>() {
                private final int expected = modCount;
                private int at = skipHoles(0);

                private int skipHoles(int i) {
                    while (i < end && jobs[i] == null) i++;
                    return i;
                }

                @Override public boolean hasNext() { return at < end; }

                @Override
                public JobState next() {
                    if (modCount != expected) throw new ConcurrentModificationException();
                    if (at >= end) throw new NoSuchElementException();
                    JobState j = jobs[at];
                    at = skipHoles(at + 1);
                    return j;
                }
            };
        }

        @Override
        public Object[] toArray() {
            return toArray(new Object[size]);
        }

        @Override
        @SuppressWarnings("unchecked")
        public <T> T[] toArray(T[] a) {
            T[] out = a.length >= size ? a : Arrays.copyOf(a, size);
            if (size == end) {
                System.arraycopy(jobs, 0, out, 0, size);
            } else {
                int to = 0;
                for (int i = 0; i < end; i++) if (jobs[i] != null) out[to++] = (T) jobs[i];
            }
            if (out.length > size) out[size] = null;
            return out;
        }
    }
}
