package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;

import java.util.Collection;
import java.util.Comparator;

/**
 * Quasi-shortest-service-first (Helios, SC'21): shortest predicted service (predicted run time x GPUs)
 * first; a job that does not fit is passed over.
 */
public final class QssfPolicy implements QueuePolicy {
    @Override public String name() { return "qssf"; }

    private static final PolicyTraits TRAITS = PolicyTraits.of(BlockingMode.SKIP, PolicyTraits.Trait.ARRIVALS_ONLY_WHEN_SETTLED);

    @Override public PolicyTraits traits() { return TRAITS; }

    @Override
    public JobQueue queue(PolicyContext ctx, Collection<JobState> pending) {
        java.util.Map<JobState, Double> service = new java.util.IdentityHashMap<>();
        for (JobState j : pending) service.put(j, ctx.expectedRuntimeMs(j) * j.gpuUnits());
        return JobQueue.sorted(pending, Comparator.comparingDouble(service::get));
    }
}
