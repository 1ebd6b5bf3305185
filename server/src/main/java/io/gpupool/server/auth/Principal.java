package io.gpupool.server.auth;

/**
 * Who is calling: the token's public id, its role and (members) its tenant.
 */
public record Principal(String tokenId, Role role, String tenant) {
    public boolean isAdmin() { return role == Role.ADMIN; }

    /** Whether this caller may see jobs of the tenant (admins see all, members only their own). */
    public boolean sees(String jobTenant) {
        return role == Role.ADMIN || (role == Role.MEMBER && tenant.equals(jobTenant));
    }
}
