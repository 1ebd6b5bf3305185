package io.gpupool.store;

/**
 * An API token. Only {@code hash} (SHA-256 of the secret, hex) is stored; the secret is shown once.
 *
 * @param id     public handle of the token (safe to list and log)
 * @param role   admin, member or agent
 * @param tenant the member's tenant; null for admin and agent tokens
 */
public record TokenRow(String id, String hash, String role, String tenant, String label, long createdMs) {
}
