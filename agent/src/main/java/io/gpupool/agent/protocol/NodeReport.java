package io.gpupool.agent.protocol;

import java.util.List;

/**
 * What the agent sends every report interval.
 *
 * @param nodeId                the id from the registration
 * @param sentAtMs              the agent's clock (epoch ms)
 * @param appliedDesiredVersion the newest desired-state version the agent has applied (-1: none)
 * @param gpus                  one telemetry reading per GPU (empty when the backend failed this time)
 * @param running               the attempts running now
 * @param statuses              unacknowledged status reports, oldest first
 * @param logs                  new log output
 * @param waitMs                the agent has nothing else to say: the server may hold the answer up to this
 *                              long until the node's desired state changes (a long poll), so new work starts
 *                              at once without frequent reports; 0 = answer at once
 * @param leaseEpoch            the lease epoch the agent holds (from its registration or the last answer): a
 *                              report from an older epoch than the node's is answered but not applied
 * @param killGraceMs           the agent's SIGTERM-to-SIGKILL grace (see {@link RegisterRequest#killGraceMs()})
 * @param accounts              whether jobs run as their owners' accounts, and accounts the node lacks (null: as
 *                              the agent said before)
 */
public record NodeReport(String nodeId, long sentAtMs, long appliedDesiredVersion, List<GpuSample> gpus,
                         List<RunningJobInfo> running, List<JobStatusReport> statuses, List<LogChunk> logs, long waitMs,
                         long leaseEpoch, long killGraceMs, AccountIsolation accounts) {
    public NodeReport {
        gpus = List.copyOf(gpus);
        running = List.copyOf(running);
        statuses = List.copyOf(statuses);
        logs = List.copyOf(logs);
    }

    public NodeReport(String nodeId, long sentAtMs, long appliedDesiredVersion, List<GpuSample> gpus,
                      List<RunningJobInfo> running, List<JobStatusReport> statuses, List<LogChunk> logs) {
        this(nodeId, sentAtMs, appliedDesiredVersion, gpus, running, statuses, logs, 0, 0, 0, null);
    }

    /** The same report, to be answered at once. */
    public NodeReport withoutWait() {
        return new NodeReport(nodeId, sentAtMs, appliedDesiredVersion, gpus, running, statuses, logs, 0, leaseEpoch, killGraceMs, accounts);
    }

    /** The same report with only these output chunks. */
    public NodeReport withLogs(List<LogChunk> kept) {
        return new NodeReport(nodeId, sentAtMs, appliedDesiredVersion, gpus, running, statuses, kept, waitMs, leaseEpoch, killGraceMs, accounts);
    }
}
