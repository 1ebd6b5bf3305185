package io.gpupool.sim.trace;

import java.util.Iterator;
import java.util.List;

/**
 * A trace read once into memory, to replay it under several policies (in parallel or one after the other)
 * without parsing its rows again for each: the same jobs in the same order, the source's label and reading
 * statistics. Jobs are immutable, so concurrent cursors share them. Costs ~230 bytes a job (the Philly table:
 * 19 MB), so it is for traces that fit comfortably; longer ones stay streamed (see {@link Trace}).
 */
public final class LoadedTrace implements Trace {
    private final String label;
    private final TraceStats stats;
    private final List<TraceJob> jobs;

    private LoadedTrace(Trace source) {
        this.label = source.label();
        this.stats = source.stats();
        this.jobs = List.copyOf(source.toList());
    }

    /** One pass over {@code source}, kept. */
    public static LoadedTrace of(Trace source) {
        return new LoadedTrace(source);
    }

    @Override public String label() { return label; }

    @Override public TraceStats stats() { return stats; }

    @Override
    public Cursor open() {
        Iterator<TraceJob> it = jobs.iterator();
        return new Cursor() {
            @Override public boolean hasNext() { return it.hasNext(); }
            @Override public TraceJob next() { return it.next(); }
            @Override public void close() {}
        };
    }
}
