package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;

/** A policy rule that keeps a job from starting now, checked before placement (after the tenant's hard limit). */
@FunctionalInterface
public interface Admission {
    /** Why the job may not start now, or null when it may. */
    String admit(PolicyContext ctx, JobState job);

    /**
     * Whether {@link #admit} answers null for every job now (e.g. the rule applies only under guarantees and no tenant
     * has one): a round may then stop walking its queue once placement refuses every shape still queued. Default: not
     * known (true for {@link #NONE}).
     */
    default boolean admitsAll(PolicyContext ctx) {
        return this == NONE;
    }

    /** Admits every job: the rule of a policy that does not implement this interface. */
    Admission NONE = (ctx, job) -> null;
}
