package io.gpupool.agent.link;

import java.util.List;

/**
 * The server's answer to a report.
 *
 * @param ackedStatusSeq the highest status seq the server has stored; the agent drops reports up to it
 * @param desired        the node's desired state; null when the server has nothing newer than
 *                       {@link NodeReport#appliedDesiredVersion()} (the agent keeps applying the last one)
 * @param logAcks        how much of each stream the server holds
 */
public record ReportResponse(long ackedStatusSeq, DesiredState desired, List<LogOffset> logAcks) {
    public ReportResponse {
        logAcks = logAcks == null ? List.of() : List.copyOf(logAcks);
    }
}
