package io.gpupool.server.core;

/**
 * How the server runs its node agents.
 *
 * @param reportIntervalMs  longest time between an agent's reports; also how long a report with nothing to say
 *                          may wait for new work (a long poll)
 * @param nodeLostTimeoutMs a node whose agent has not reported for this long is lost: its attempts end and its
 *                          jobs are requeued or failed by their restart policy
 */
public record AgentSettings(long reportIntervalMs, long nodeLostTimeoutMs) {
    public static final long DEFAULT_REPORT_INTERVAL_MS = 5_000;
    public static final long DEFAULT_NODE_LOST_TIMEOUT_MS = 30_000;

    public AgentSettings {
        if (reportIntervalMs < 10) throw new io.gpupool.model.SpecException("--agent-report-interval", "agent-report-interval", "must be at least 10 ms");
        if (nodeLostTimeoutMs < 3 * reportIntervalMs) {
            throw new io.gpupool.model.SpecException("--node-lost-timeout", "node-lost-timeout",
                    "must be at least three report intervals (" + 3 * reportIntervalMs + " ms), got " + nodeLostTimeoutMs + " ms");
        }
    }

    public static AgentSettings defaults() {
        return new AgentSettings(DEFAULT_REPORT_INTERVAL_MS, DEFAULT_NODE_LOST_TIMEOUT_MS);
    }

    /** The longest a report may wait for new work: one interval, and well inside the node-lost timeout. */
    public long maxWaitMs() {
        return Math.min(reportIntervalMs, nodeLostTimeoutMs / 3);
    }
}
