package io.gpupool.server.auth;

/**
 * Who is calling: the token's public id, its role, (members) its tenant and the Unix account its jobs run as
 * (null: not bound to one), and (node credentials) its node.
 */
public record Principal(String tokenId, Role role, String tenant, String node, String unixUser) {
    public Principal(String tokenId, Role role, String tenant) {
        this(tokenId, role, tenant, null, null);
    }

    public boolean isAdmin() { return role == Role.ADMIN; }

    /** Whether this caller may see jobs of the tenant (admins see all, members only their own). */
    public boolean sees(String jobTenant) {
        return role == Role.ADMIN || (role == Role.MEMBER && tenant.equals(jobTenant));
    }

    /** Whether this caller may report for the node: only that node's own credential may. */
    public boolean actsFor(String nodeName) {
        return role == Role.NODE && node != null && node.equals(nodeName);
    }
}
