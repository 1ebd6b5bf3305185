package io.gpupool.server.core;

import java.util.List;
import java.util.Map;

/** Read-only answers of the engine loop that are not whole snapshots. */
public final class Views {
    private Views() {}

    /** One GPU grant of a job, by node name. */
    public record Grant(int replica, String node, int gpu, String uuid, int milli, long memoryMib, boolean exclusive) {}

    /** What only the live engine knows of an active job. */
    public record Live(String state, String waitReason, List<Grant> allocation) {}

    /**
     * A job an agent must be running on its node (desired state): the agent starts what is new here and
     * stops what is gone.
     */
    public record Assignment(String jobId, String tenant, String name, List<String> command, Map<String, String> env,
                             long startedMs, List<Grant> grants) {}

    /** Outcome of a submission: the job, and whether this call created it (false: idempotent retry). */
    public record Submitted(String jobId, io.gpupool.store.JobRow row, boolean created) {}
}
