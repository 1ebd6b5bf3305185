package io.gpupool.agent.link;

/**
 * The server's answer to a registration.
 *
 * @param nodeId           the id the node reports under from now on
 * @param serverEpoch      identifies the server's store; when it changes (a new, empty store) the agent
 *                         forgets the last desired-state version it applied, since versions restart
 * @param reportIntervalMs  how often to report (0: the agent's own setting)
 * @param nodeLostTimeoutMs after this long without a report the server declares the node lost and gives
 *                          its jobs' GPUs to others (0: the default, 30 s); the agent stops its jobs
 *                          before then when it cannot reach the server, so no attempt runs on after the
 *                          server has re-placed it
 * @param nodeToken        the node's own credential for its reports: it acts for this node only (null from a
 *                         server that needs none); a new registration replaces it
 */
public record Registration(String nodeId, String serverEpoch, long reportIntervalMs, long nodeLostTimeoutMs, String nodeToken) {
    public static final long DEFAULT_NODE_LOST_TIMEOUT_MS = 30_000;

    /** A registration without a node credential. */
    public Registration(String nodeId, String serverEpoch, long reportIntervalMs, long nodeLostTimeoutMs) {
        this(nodeId, serverEpoch, reportIntervalMs, nodeLostTimeoutMs, null);
    }
}
