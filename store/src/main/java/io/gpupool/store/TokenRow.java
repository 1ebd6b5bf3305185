package io.gpupool.store;

/**
 * An API token. Only {@code hash} (SHA-256 of the secret, hex) is stored; the secret is shown once.
 *
 * @param id     public handle of the token (safe to list and log)
 * @param role   admin, member, agent (joins nodes) or node (one node's agent)
 * @param tenant the member's tenant; null otherwise
 * @param node     the node a node credential acts for; null otherwise
 * @param unixUser the Unix account a member token's jobs run as; null = not bound
 */
public record TokenRow(String id, String hash, String role, String tenant, String label, long createdMs, String node,
                       String unixUser) {

    /** A token not bound to a node or an account. */
    public TokenRow(String id, String hash, String role, String tenant, String label, long createdMs) {
        this(id, hash, role, tenant, label, createdMs, null, null);
    }

    /** A token bound to a node (a node credential), or to none. */
    public TokenRow(String id, String hash, String role, String tenant, String label, long createdMs, String node) {
        this(id, hash, role, tenant, label, createdMs, node, null);
    }
}
