package io.gpupool.agent.link;

/**
 * The server's answer to a registration.
 *
 * @param nodeId           the id the node reports under from now on
 * @param serverEpoch      identifies the server's store; when it changes (a new, empty store) the agent
 *                         forgets the last desired-state version it applied, since versions restart
 * @param reportIntervalMs how often to report; the server declares the node lost after its own timeout
 *                         (30 s by default) without a report
 */
public record Registration(String nodeId, String serverEpoch, long reportIntervalMs) {
}
