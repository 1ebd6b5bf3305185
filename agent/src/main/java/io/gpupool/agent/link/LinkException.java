package io.gpupool.agent.link;

/** A call to the server did not succeed. */
public class LinkException extends Exception {

    /** Whether trying again later may help. */
    public enum Kind {
        /** No answer, a time-out, a 5xx: keep jobs running, buffer reports, retry. */
        UNREACHABLE,
        /** The server answered no (bad token, malformed request): retrying the same request will not help. */
        REJECTED,
        /** The server speaks another agent protocol version ({@code AgentProtocolVersion}): the agent stops; an upgrade is needed. */
        INCOMPATIBLE,
        /** The server does not know this node id (it was removed), or no longer takes its credential: register again. */
        UNKNOWN_NODE,
        /** The agent cut its own waiting report short because it has news (a job started or ended); nothing failed. */
        WOKEN
    }

    private final Kind kind;

    public LinkException(Kind kind, String message) {
        super(message);
        this.kind = kind;
    }

    public LinkException(Kind kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }
}
