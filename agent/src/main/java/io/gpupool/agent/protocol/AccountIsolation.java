package io.gpupool.agent.protocol;

import java.util.List;

/**
 * Whether a node runs jobs as their owners' Unix accounts, as its agent tells the server at registration and in
 * every report. The server places a tenant's jobs on a node that does not ({@code switches} false: every job runs as
 * the agent's own account) only if the tenant allows that, and a job whose account the node lacks not at all.
 *
 * @param switches whether jobs run as their own accounts here (the agent is root and has setpriv)
 * @param reason   why not, when they do not; null otherwise
 * @param missing  accounts jobs asked for that this node does not have (checked again from time to time: an account
 *                 an admin adds leaves the list by itself)
 */
public record AccountIsolation(boolean switches, String reason, List<String> missing) {
    public AccountIsolation {
        missing = missing == null ? List.of() : List.copyOf(missing);
    }

    /** What an agent that says nothing (one older than accounts) does: every job as its own account. */
    public static final AccountIsolation UNKNOWN = new AccountIsolation(false, "the agent does not say (an older agent)", List.of());
}
