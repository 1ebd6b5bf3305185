package io.gpupool.server.auth;

import io.gpupool.store.TokenRow;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * API tokens. A token is {@code gp_<id>_<secret>} with 256 random bits of secret; only its SHA-256 is kept
 * (in the store and here), so a leaked database does not leak usable tokens. A random 256-bit secret needs
 * no slow password hash: guessing it is hopeless either way, and lookups stay O(1).
 */
public final class Tokens {
    private static final SecureRandom RANDOM = new SecureRandom();
    private final Map<String, Principal> byHash = new ConcurrentHashMap<>();

    /** A freshly minted token: the secret (shown once) and the row to store. */
    public record Minted(String token, TokenRow row) {}

    public static Minted mint(Role role, String tenant, String label, long nowMs) {
        return mint(role, tenant, label, null, nowMs);
    }

    /** A token whose jobs run as the Unix account {@code unixUser} (null: not bound to one). */
    public static Minted mint(Role role, String tenant, String label, String unixUser, long nowMs) {
        String id = randomText(6);
        String token = "gp_" + id + "_" + randomText(32);
        return new Minted(token, new TokenRow(id, hash(token), role.wire(), tenant, label, nowMs, null, unixUser));
    }

    /** A node's own credential: it may report for that node and nothing else. */
    public static Minted mintForNode(String node, long nowMs) {
        String id = randomText(6);
        String token = "gp_" + id + "_" + randomText(32);
        return new Minted(token, new TokenRow(id, hash(token), Role.NODE.wire(), null, "node " + node, nowMs, node));
    }

    /** The row for a token chosen by the operator (--admin-token / GPUPOOL_ADMIN_TOKEN). */
    public static TokenRow fromGiven(String token, Role role, String label, long nowMs) {
        return new TokenRow("given-" + hash(token).substring(0, 8), hash(token), role.wire(), null, label, nowMs);
    }

    public void add(TokenRow row) {
        byHash.put(row.hash(), new Principal(row.id(), Role.fromWire(row.role()), row.tenant(), row.node(), row.unixUser()));
    }

    /** Revokes a token by its public id. */
    public void remove(String id) {
        byHash.values().removeIf(p -> p.tokenId().equals(id));
    }

    public boolean known(String token) {
        return byHash.containsKey(hash(token));
    }

    public boolean hasAdmin() {
        return byHash.values().stream().anyMatch(Principal::isAdmin);
    }

    public Optional<Principal> lookup(String token) {
        if (token == null || token.isEmpty() || token.length() > 256) return Optional.empty();
        return Optional.ofNullable(byHash.get(hash(token)));
    }

    public static String hash(String token) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JDK", e);
        }
    }

    private static String randomText(int bytes) {
        byte[] b = new byte[bytes];
        RANDOM.nextBytes(b);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(b).replace('_', 'z').replace('-', 'Z');
    }
}
