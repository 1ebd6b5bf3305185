package io.gpupool.server.core;

import io.gpupool.model.TimeLimit;
import io.gpupool.store.TenantRow;

/**
 * A tenant's time limits for its jobs (seconds, 0 = none): the default a job without its own limit gets, and the most a
 * job may ask for. Both are applied at submission; the stored request then carries the limit, so changing the tenant
 * later changes no queued or running job.
 */
final class TenantTimeLimits {
    private TenantTimeLimits() {}

    /** Refuses a default over the maximum (every job without a limit of its own would be refused). */
    static void check(long defaultSec, long maxSec) {
        if (maxSec > 0 && defaultSec > maxSec) {
            throw ServiceException.invalid("defaultTimeLimit", "must not exceed maxTimeLimit (" + TimeLimit.format(maxSec)
                    + "), got " + TimeLimit.format(defaultSec));
        }
    }

    /** The request with the tenant's default filled in; refused (naming {@code timeLimit} and the maximum) when over it. */
    static JobRequest apply(JobRequest request, TenantRow tenant) {
        long limit = request.timeLimitSec() > 0 ? request.timeLimitSec() : tenant.defaultTimeLimitSec();
        if (tenant.maxTimeLimitSec() > 0 && limit > tenant.maxTimeLimitSec()) {
            throw ServiceException.invalid("timeLimit", TimeLimit.format(limit) + " is over tenant '" + tenant.name()
                    + "''s maximum time limit of " + TimeLimit.format(tenant.maxTimeLimitSec()));
        }
        return limit == request.timeLimitSec() ? request : request.withTimeLimit(limit);
    }
}
