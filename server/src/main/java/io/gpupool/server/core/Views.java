package io.gpupool.server.core;

import java.util.List;

/** Read-only answers of the engine loop that are not whole snapshots. */
public final class Views {
    private Views() {}

    /** One GPU grant of a job, by node name. */
    public record Grant(int replica, String node, int gpu, String uuid, int milli, long memoryMib, boolean exclusive) {}

    /** What only the live engine knows of an active job. */
    public record Live(String state, String waitReason, List<Grant> allocation) {}

    /**
     * A node registered by its agent.
     *
     * @param revokedCredential the id of the node credential this registration replaced, or null
     */
    public record Registered(String node, String epoch, long reportIntervalMs, long nodeLostTimeoutMs, String revokedCredential,
                             long leaseEpoch) {}

    /**
     * The answer to an agent's report (docs/architecture.md, "Agent protocol").
     *
     * @param desired    the node's desired state when newer than what the agent applied, else null
     * @param nextChange completes when the node's desired state changes after this answer (a waiting report
     *                   waits on it)
     */
    public record Reported(long ackedStatusSeq, io.gpupool.agent.protocol.DesiredState desired,
                           List<io.gpupool.agent.protocol.LogOffset> logAcks, java.util.concurrent.CompletableFuture<Void> nextChange,
                           long leaseEpoch) {}

    /** Outcome of a submission: the job, and whether this call created it (false: idempotent retry). */
    public record Submitted(String jobId, io.gpupool.store.JobRow row, boolean created) {}
}
