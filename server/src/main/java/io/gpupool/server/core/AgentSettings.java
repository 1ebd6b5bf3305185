package io.gpupool.server.core;

/**
 * How the server runs its node agents.
 *
 * @param reportIntervalMs  longest time between an agent's reports; also how long a report with nothing to say
 *                          may wait for new work (a long poll)
 * @param nodeLostTimeoutMs a node whose agent has not reported for this long is lost: it gets no new work. It is
 *                          also the agent's lease: an agent that has had no report applied for this long stops its
 *                          jobs
 * @param fenceMarginMs     how much longer the server waits, after a node's lease and its agent's kill grace have
 *                          run out, before it ends the lost node's attempts and runs their jobs elsewhere: it covers
 *                          a slow or starved agent machine (the fencing comes late, a process takes time to die) and
 *                          the two clocks' drift (docs/architecture.md, "At most once")
 */
public record AgentSettings(long reportIntervalMs, long nodeLostTimeoutMs, long fenceMarginMs) {
    public static final long DEFAULT_REPORT_INTERVAL_MS = 5_000;
    public static final long DEFAULT_NODE_LOST_TIMEOUT_MS = 30_000;
    public static final long DEFAULT_FENCE_MARGIN_MS = 5_000;
    /** An agent that does not say its kill grace (an older one) is taken to have the agent's default. */
    public static final long DEFAULT_KILL_GRACE_MS = 10_000;

    public AgentSettings {
        if (reportIntervalMs < 10) throw new io.gpupool.model.SpecException("--agent-report-interval", "agent-report-interval", "must be at least 10 ms");
        if (nodeLostTimeoutMs < 3 * reportIntervalMs) {
            throw new io.gpupool.model.SpecException("--node-lost-timeout", "node-lost-timeout",
                    "must be at least three report intervals (" + 3 * reportIntervalMs + " ms), got " + nodeLostTimeoutMs + " ms");
        }
        if (fenceMarginMs < 0) throw new io.gpupool.model.SpecException("--fence-margin", "fence-margin", "must not be negative, got " + fenceMarginMs + " ms");
    }

    /** The default margin. */
    public AgentSettings(long reportIntervalMs, long nodeLostTimeoutMs) {
        this(reportIntervalMs, nodeLostTimeoutMs, DEFAULT_FENCE_MARGIN_MS);
    }

    public static AgentSettings defaults() {
        return new AgentSettings(DEFAULT_REPORT_INTERVAL_MS, DEFAULT_NODE_LOST_TIMEOUT_MS, DEFAULT_FENCE_MARGIN_MS);
    }

    /** The longest a report may wait for new work: one interval, and well inside the node-lost timeout. */
    public long maxWaitMs() {
        return Math.min(reportIntervalMs, nodeLostTimeoutMs / 3);
    }

    /** How long after its last applied report a lost node's attempts are given up: lease, kill grace, margin. */
    public long giveUpAfterMs(long killGraceMs) {
        return nodeLostTimeoutMs + Math.max(0, killGraceMs) + fenceMarginMs;
    }
}
