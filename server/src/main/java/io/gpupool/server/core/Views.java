package io.gpupool.server.core;

import io.gpupool.agent.protocol.DesiredState;
import io.gpupool.agent.protocol.Grant;
import io.gpupool.agent.protocol.LogOffset;
import io.gpupool.store.JobRow;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/** Read-only answers of the engine loop that are not whole snapshots. */
public final class Views {
    private Views() {}

    /** What only the live engine knows of an active job: its grants as the API shows them. */
    /** A job's state as the engine has it now: why it waits (the sentence, and the refusal as data), its GPUs. */
    public record Live(String state, String waitReason, io.gpupool.engine.status.Status waitStatus, List<Grant> allocation) {}

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
    public record Reported(long ackedStatusSeq, DesiredState desired, List<LogOffset> logAcks, CompletableFuture<Void> nextChange,
                           long leaseEpoch) {}

    /** Outcome of a submission: the job, and whether this call created it (false: idempotent retry). */
    public record Submitted(String jobId, JobRow row, boolean created) {}

    /**
     * An advance reservation as the API and the dashboard show it.
     *
     * @param gpus      how many GPUs it holds
     * @param model     the GPU model asked for, null when nodes were
     * @param gpuList   the reserved GPUs as {@code node:index}
     * @param createdBy who made it ("admin token ID"); null in the dashboard's snapshot
     */
    public record Reservation(String name, String tenant, long startMs, long endMs, int gpus, String model, List<String> nodes,
                              List<String> gpuList, long createdMs, String createdBy) {}

    /**
     * A reservation just made, and the running jobs of other tenants that will still hold some of its GPUs when its window
     * starts (only when it was made with ignoreRunningJobs): it is honoured on those GPUs once they end.
     */
    public record MadeReservation(Reservation reservation, List<String> notHonouredUntilEnd) {}
}
