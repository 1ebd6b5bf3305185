package io.gpupool.server.auth;

/** What a token may do: admin everything; member its own tenant's jobs; agent only the node-facing calls. */
public enum Role {
    ADMIN, MEMBER, AGENT;

    public String wire() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }

    public static Role fromWire(String s) {
        return Role.valueOf(s.toUpperCase(java.util.Locale.ROOT));
    }
}
