package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;

import java.util.Collection;

/**
 * Quasi-shortest-service-first (Helios, SC'21): shortest predicted service (predicted run time x GPUs)
 * first; a job that does not fit is passed over.
 */
public final class QssfPolicy implements QueuePolicy {
    @Override public String name() { return "qssf"; }

    private static final PolicyTraits TRAITS = PolicyTraits.of(BlockingMode.SKIP, PolicyTraits.Trait.ARRIVALS_ONLY_WHEN_SETTLED);

    @Override public PolicyTraits traits() { return TRAITS; }

    private final KeyedQueue.Scratch scratch = new KeyedQueue.Scratch();   // every round's queue, in turn

    @Override
    public JobQueue queue(PolicyContext ctx, Collection<JobState> pending) {
        return KeyedQueue.of(pending, j -> ctx.expectedRuntimeMs(j) * j.gpuUnits(), false, scratch);
    }
}
