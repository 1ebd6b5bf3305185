package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;

import java.util.Collection;
import java.util.OptionalLong;

/** The order a round tries pending jobs in. Every policy has one. */
public interface QueueOrder {
    /** This round's pending jobs in the order to try them; ties go to arrival order. */
    JobQueue queue(PolicyContext ctx, Collection<JobState> pending);

    /** When the order (or who may preempt whom) changes with no arrival or completion, e.g. a job crossing a LAS threshold. */
    default OptionalLong nextReevaluationMs(PolicyContext ctx) {
        return OptionalLong.empty();
    }
}
