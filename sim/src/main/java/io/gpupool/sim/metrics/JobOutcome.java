package io.gpupool.sim.metrics;

/**
 * How one completed job fared. Times in ms; {@code waitMs} is all time spent queued (over preemptions),
 * {@code gpus} the GPU units it held while running (0.5 for half a GPU), {@code runMs} how long it ran (its trace
 * duration, or less when {@code timedOut}: its time limit stopped it).
 */
public record JobOutcome(String id, String tenant, long submitMs, long firstStartMs, long finishMs,
                         long runMs, double gpus, long waitMs, int preemptions, boolean timedOut) {
    public long jctMs() { return finishMs - submitMs; }

    public double slowdown() { return jctMs() / (double) runMs; }
}
