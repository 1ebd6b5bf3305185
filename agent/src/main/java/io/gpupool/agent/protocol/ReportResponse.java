package io.gpupool.agent.protocol;

import java.util.List;

/**
 * The server's answer to a report.
 *
 * @param ackedStatusSeq the highest status seq the server has stored; the agent drops reports up to it
 * @param desired        the node's desired state; null when the server has nothing newer than
 *                       {@link NodeReport#appliedDesiredVersion()} (the agent keeps applying the last one)
 * @param logAcks        how much of each stream the server holds
 * @param leaseEpoch     the node's lease epoch: equal to the report's, the report was applied and renews the
 *                       agent's lease from the time it was sent; higher, the server declared the node lost since
 *                       the agent last heard from it: nothing in the report was applied, no lease is renewed, and
 *                       the agent reports again under this epoch (its running attempts that {@code desired} no
 *                       longer lists are stopped meanwhile)
 * @param nodeLostTimeoutMs the lease this answer renews (the server's node-lost timeout now: a restarted server may
 *                          have another than the registration gave); 0: keep the last one
 */
public record ReportResponse(long ackedStatusSeq, DesiredState desired, List<LogOffset> logAcks, long leaseEpoch, long nodeLostTimeoutMs) {
    public ReportResponse {
        logAcks = logAcks == null ? List.of() : List.copyOf(logAcks);
    }

    /** An answer in lease epoch 0. */
    public ReportResponse(long ackedStatusSeq, DesiredState desired, List<LogOffset> logAcks) {
        this(ackedStatusSeq, desired, logAcks, 0, 0);
    }
}
