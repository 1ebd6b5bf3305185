package io.gpupool.server.auth;

/**
 * What a token may do: admin everything; member its own tenant's jobs; agent (a join token) register nodes;
 * node (the credential a registration hands out) report for its one node.
 */
public enum Role {
    ADMIN, MEMBER, AGENT, NODE;

    public String wire() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }

    public static Role fromWire(String s) {
        return Role.valueOf(s.toUpperCase(java.util.Locale.ROOT));
    }
}
