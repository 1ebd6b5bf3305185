package io.gpupool.store;

/**
 * An API token. Only {@code hash} (SHA-256 of the secret, hex) is stored; the secret is shown once.
 *
 * @param id     public handle of the token (safe to list and log)
 * @param role   admin, member, agent (joins nodes) or node (one node's agent)
 * @param tenant the member's tenant; null otherwise
 * @param node   the node a node credential acts for; null otherwise
 */
public record TokenRow(String id, String hash, String role, String tenant, String label, long createdMs, String node) {

    /** A token not bound to a node. */
    public TokenRow(String id, String hash, String role, String tenant, String label, long createdMs) {
        this(id, hash, role, tenant, label, createdMs, null);
    }
}
