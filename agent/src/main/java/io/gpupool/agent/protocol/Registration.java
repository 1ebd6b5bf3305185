package io.gpupool.agent.protocol;

/**
 * The server's answer to a registration.
 *
 * @param nodeId           the id the node reports under from now on
 * @param serverEpoch      identifies the server's store; when it changes (a new, empty store) the agent
 *                         forgets the last desired-state version it applied, since versions restart
 * @param reportIntervalMs  how often to report (0: the agent's own setting)
 * @param nodeLostTimeoutMs the agent's lease: it may run jobs for this long after it sent a report (or this
 *                          registration) that the server answered; when the lease runs out it stops them.
 *                          The server declares the node lost after this long without a report, and re-places
 *                          its jobs only once their fenced processes must be gone (0: the default, 30 s)
 * @param nodeToken        the node's own credential for its reports: it acts for this node only (null from a
 *                         server that needs none); a new registration replaces it
 * @param leaseEpoch       the node's lease epoch: the server raises it whenever it declares the node lost, and
 *                         a report sent under an older epoch renews no lease and changes nothing
 */
public record Registration(String nodeId, String serverEpoch, long reportIntervalMs, long nodeLostTimeoutMs, String nodeToken,
                           long leaseEpoch) {
    public static final long DEFAULT_NODE_LOST_TIMEOUT_MS = 30_000;

    /** A registration without a node credential, in lease epoch 0. */
    public Registration(String nodeId, String serverEpoch, long reportIntervalMs, long nodeLostTimeoutMs) {
        this(nodeId, serverEpoch, reportIntervalMs, nodeLostTimeoutMs, null, 0);
    }
}
