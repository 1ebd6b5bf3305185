package io.gpupool.agent.protocol;

import java.net.URI;

/**
 * The agent protocol's version, one number both ends know. The agent sends it in the header {@value #HEADER} of each call
 * (registration and report), the server in the same header of each answer, errors included. Each end speaks exactly one
 * version: the server refuses a call announcing another one (422, field {@value #HEADER}), and the agent stops when an
 * answer names another one. Raise {@link #CURRENT} whenever a change to the messages would be misread by the other end
 * (a field that changes meaning, a required field added); fields an older end may ignore need no new version.
 *
 * <p>Agents and servers from before the header existed send none: they speak version 1, the protocol they share with this
 * one, so a missing header reads as 1 on both ends.
 */
public final class AgentProtocolVersion {
    /**
     * The version this build speaks. 2: launches carry a time limit the agent must enforce, and reports may say TIMEOUT
     * (an agent of version 1 would run such a job without its limit; a server of version 1 cannot read the phase).
     *
     * <p>The job's submit instant ({@code submitted_ms} in launches, statuses, running attempts and output; {@link JobKey})
     * came later without a new version: where one end does not send it, the other treats the attempt as before (named by
     * job id and attempt alone), so an end of the release before it and one of this release do together exactly what two
     * ends of that release did. Raising the version would have cut every agent not yet upgraded off its upgraded server.
     */
    public static final int CURRENT = 2;
    /** What an end that announces no version speaks: the protocol before versions were announced. */
    public static final int UNANNOUNCED = 1;
    public static final String HEADER = "Gpupool-Agent-Protocol";

    private AgentProtocolVersion() {}

    /**
     * The version in a header's value: {@link #UNANNOUNCED} for none.
     *
     * @throws IllegalArgumentException when the value is not a positive whole number
     */
    public static int parse(String header) {
        if (header == null || header.isBlank()) return UNANNOUNCED;
        try {
            int v = Integer.parseInt(header.trim());
            if (v >= 1) return v;
        } catch (NumberFormatException e) {
            // reported below
        }
        String shown = header.length() > 20 ? header.substring(0, 20) + "..." : header;
        throw new IllegalArgumentException("must be a whole number >= 1, got '" + shown + "'");
    }

    /** The agent's one line when {@code server} answered in another version than the agent's {@code spoken}. */
    public static String agentRefuses(URI server, int serverVersion, int spoken) {
        return "server " + server + " speaks agent protocol " + serverVersion + ", this agent speaks " + spoken + ": "
                + (serverVersion > spoken ? "upgrade the agent to the server's release" : "upgrade the server (or run an agent of its release)");
    }

    /** The server's rule when an agent announced {@code announced}. */
    public static String serverRefuses(int announced, int spoken) {
        return "this server speaks agent protocol " + spoken + ", the agent announced " + announced + ": "
                + (announced > spoken ? "upgrade the server (or run an agent of its release)" : "upgrade the agent to the server's release");
    }
}
