package io.gpupool.sim.trace;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;

/**
 * A replayable job trace. Each {@link #open()} streams the jobs again, in submit order (jobs submitted at
 * the same instant keep trace order), creating job objects as the simulator pulls them, so a replay holds
 * only the jobs that are queued or running, never the whole trace.
 */
public interface Trace {
    /** A short name for reports: the file name, or the generator's parameters. */
    String label();

    /** Reading statistics: jobs, skipped bad rows, ignored rows. */
    TraceStats stats();

    /** A new pass over the jobs in submit order. */
    Cursor open();

    /** Every job of one pass, in submit order: for small traces (an optimizer's window, tests). */
    default List<TraceJob> toList() {
        List<TraceJob> jobs = new ArrayList<>();
        try (Cursor c = open()) {
            c.forEachRemaining(jobs::add);
        }
        return jobs;
    }

    /** An iterator over one pass; close it to release the file. */
    interface Cursor extends Iterator<TraceJob>, AutoCloseable {
        @Override
        void close();
    }

    /** Jobs already in memory (tests, small examples), sorted stably by submit time. */
    static Trace of(String label, List<TraceJob> jobs) {
        List<TraceJob> sorted = new ArrayList<>(jobs);
        sorted.sort(Comparator.comparingLong(t -> t.spec().submitTimeMs()));
        return inMemory(label, TraceStats.of(sorted.size()), sorted);
    }

    /**
     * A trace read once into memory, to replay it under several policies (in parallel or one after the other)
     * without parsing its rows again for each: the same jobs in the same order, the source's label and reading
     * statistics. Jobs are immutable, so concurrent cursors share them. Costs ~230 bytes a job (the Philly table:
     * 19 MB), so it is for traces that fit comfortably; longer ones stay streamed.
     */
    static Trace loaded(Trace source) {
        return inMemory(source.label(), source.stats(), source.toList());
    }

    /** Jobs in memory, already in submit order. */
    private static Trace inMemory(String label, TraceStats stats, List<TraceJob> jobs) {
        List<TraceJob> fixed = List.copyOf(jobs);
        return new Trace() {
            @Override public String label() { return label; }

            @Override public TraceStats stats() { return stats; }

            @Override
            public Cursor open() {
                Iterator<TraceJob> it = fixed.iterator();
                return new Cursor() {
                    @Override public boolean hasNext() { return it.hasNext(); }
                    @Override public TraceJob next() { return it.next(); }
                    @Override public void close() {}
                };
            }
        };
    }
}
