package io.gpupool.agent.link;

import io.gpupool.agent.protocol.NodeReport;
import io.gpupool.agent.protocol.RegisterRequest;
import io.gpupool.agent.protocol.Registration;
import io.gpupool.agent.protocol.ReportResponse;

/**
 * The agent's connection to the gpupool server. Two calls, both initiated by the agent (it needs no open
 * port and works through NAT and firewalls, like Nomad's client and Determined's agent):
 *
 * <ul>
 *   <li>{@link #register}: once at start, and again when the server asks; announces the inventory and
 *       the jobs still running here, and gets the node id;</li>
 *   <li>{@link #report}: every few seconds; carries telemetry, job status reports (numbered, resent until
 *       acknowledged) and new log output, and returns the node's desired state.</li>
 * </ul>
 *
 * The HTTP form of both is specified in docs/architecture.md ("Agent protocol").
 */
public interface ServerLink {

    Registration register(RegisterRequest request) throws LinkException;

    ReportResponse report(NodeReport report) throws LinkException;

    /**
     * The agent has news: a report now waiting for the server ({@link NodeReport#waitMs()}) ends at once with
     * {@link LinkException.Kind#WOKEN}, and the next one does not wait. Any thread may call it.
     */
    default void wake() {
    }
}
