package io.gpupool.server;

import io.gpupool.server.core.AgentSettings;

import java.nio.file.Path;

/**
 * How to run the service.
 *
 * @param host         address to listen on
 * @param port         HTTP port (0 = any free port)
 * @param dataDir      embedded store directory (used when {@code dbUrl} is null)
 * @param dbUrl        a JDBC URL (jdbc:postgresql://... or jdbc:sqlite:...), or null for the embedded store
 * @param adminToken   an admin token chosen by the operator, or null (one is minted and printed at first start)
 * @param cluster      static nodes (cluster SPEC or YAML file) present without an agent, or null
 * @param policy       queue policy until an admin changes it; with {@code config}, the policy over the file's (null: the
 *                     file's, else fair-share)
 * @param rateLimit    requests per second per token (0 = unlimited)
 * @param demo         run the demo: fake nodes, synthetic workload, fake agents completing jobs
 * @param demoSeed     seed of the demo's workload
 * @param agents       node agents' report interval and node-lost timeout
 * @param tls          serve HTTPS with this certificate and key; null = plain HTTP
 * @param allowRootJobs whether jobs may name root as their Unix account (tokens' unixUser, jobs' runAs); agents
 *                     check uid 0 again under any name
 * @param config       the configuration tree (YAML, docs/configuration.md) applied at every start over the defaults, or
 *                     null: the saved configuration (or the defaults) runs
 * @param advertiseUrl where clients and agents reach this replica (high availability: a standby names the active's);
 *                     null: from the host and the port it listens on
 * @param leaseTtlMs   the active replica's lease (PostgreSQL): a standby takes over this long after the active's last
 *                     renewal, or at once when the active's database session is gone
 */
public record ServerOptions(String host, int port, Path dataDir, String dbUrl, String adminToken, String cluster,
                            String policy, double rateLimit, boolean demo, long demoSeed, AgentSettings agents, Tls tls,
                            boolean allowRootJobs, Path config, String advertiseUrl, long leaseTtlMs) {
    public static final long DEFAULT_LEASE_TTL_MS = 3000;

    /** As before high availability: the advertised URL from host and port, the default lease. */
    public ServerOptions(String host, int port, Path dataDir, String dbUrl, String adminToken, String cluster, String policy, double rateLimit,
                         boolean demo, long demoSeed, AgentSettings agents, Tls tls, boolean allowRootJobs, Path config) {
        this(host, port, dataDir, dbUrl, adminToken, cluster, policy, rateLimit, demo, demoSeed, agents, tls, allowRootJobs, config, null,
                DEFAULT_LEASE_TTL_MS);
    }

    public static final String DEMO_CLUSTER = "2x8:A100-80GB,1x8:L40S";

    /**
     * The server's TLS identity as PEM files (read at start by {@code TlsFiles}).
     *
     * @param certFile the server's certificate, optionally followed by its chain (--tls-cert)
     * @param keyFile  its private key (--tls-key)
     */
    public record Tls(Path certFile, Path keyFile) {
        /** Both files or neither (null): one alone is a mistake, named by the option that is missing. */
        public static Tls of(Path certFile, Path keyFile) {
            if (certFile == null && keyFile == null) return null;
            if (keyFile == null) throw new io.gpupool.model.SpecException("--tls-key", null, "is required with --tls-cert (the certificate's private key, PEM)");
            if (certFile == null) throw new io.gpupool.model.SpecException("--tls-cert", null, "is required with --tls-key (the server's certificate, PEM)");
            return new Tls(certFile, keyFile);
        }
    }

    public static ServerOptions defaults() {
        return new ServerOptions("0.0.0.0", 8080, Path.of("gpupool-data"), null, null, null, "fair-share", 50, false, 1, AgentSettings.defaults(), null, false, null);
    }

    public ServerOptions withPort(int p) {
        return new ServerOptions(host, p, dataDir, dbUrl, adminToken, cluster, policy, rateLimit, demo, demoSeed, agents, tls, allowRootJobs, config, advertiseUrl, leaseTtlMs);
    }

    public ServerOptions withHost(String h) {
        return new ServerOptions(h, port, dataDir, dbUrl, adminToken, cluster, policy, rateLimit, demo, demoSeed, agents, tls, allowRootJobs, config, advertiseUrl, leaseTtlMs);
    }

    public ServerOptions withDataDir(Path d) {
        return new ServerOptions(host, port, d, dbUrl, adminToken, cluster, policy, rateLimit, demo, demoSeed, agents, tls, allowRootJobs, config, advertiseUrl, leaseTtlMs);
    }

    public ServerOptions withDb(String url) {
        return new ServerOptions(host, port, dataDir, url, adminToken, cluster, policy, rateLimit, demo, demoSeed, agents, tls, allowRootJobs, config, advertiseUrl, leaseTtlMs);
    }

    public ServerOptions withAdminToken(String t) {
        return new ServerOptions(host, port, dataDir, dbUrl, t, cluster, policy, rateLimit, demo, demoSeed, agents, tls, allowRootJobs, config, advertiseUrl, leaseTtlMs);
    }

    public ServerOptions withCluster(String c) {
        return new ServerOptions(host, port, dataDir, dbUrl, adminToken, c, policy, rateLimit, demo, demoSeed, agents, tls, allowRootJobs, config, advertiseUrl, leaseTtlMs);
    }

    public ServerOptions withPolicy(String p) {
        return new ServerOptions(host, port, dataDir, dbUrl, adminToken, cluster, p, rateLimit, demo, demoSeed, agents, tls, allowRootJobs, config, advertiseUrl, leaseTtlMs);
    }

    public ServerOptions withRateLimit(double r) {
        return new ServerOptions(host, port, dataDir, dbUrl, adminToken, cluster, policy, r, demo, demoSeed, agents, tls, allowRootJobs, config, advertiseUrl, leaseTtlMs);
    }

    public ServerOptions withAgents(AgentSettings a) {
        return new ServerOptions(host, port, dataDir, dbUrl, adminToken, cluster, policy, rateLimit, demo, demoSeed, a, tls, allowRootJobs, config, advertiseUrl, leaseTtlMs);
    }

    public ServerOptions withTls(Tls t) {
        return new ServerOptions(host, port, dataDir, dbUrl, adminToken, cluster, policy, rateLimit, demo, demoSeed, agents, t, allowRootJobs, config, advertiseUrl, leaseTtlMs);
    }

    public ServerOptions withDemo(boolean d) {
        return new ServerOptions(host, port, dataDir, dbUrl, adminToken, cluster, policy, rateLimit, d, demoSeed, agents, tls, allowRootJobs, config, advertiseUrl, leaseTtlMs);
    }

    public ServerOptions withAllowRootJobs(boolean allow) {
        return new ServerOptions(host, port, dataDir, dbUrl, adminToken, cluster, policy, rateLimit, demo, demoSeed, agents, tls, allow, config, advertiseUrl, leaseTtlMs);
    }

    public ServerOptions withAdvertiseUrl(String url) {
        return new ServerOptions(host, port, dataDir, dbUrl, adminToken, cluster, policy, rateLimit, demo, demoSeed, agents, tls, allowRootJobs, config, url, leaseTtlMs);
    }

    public ServerOptions withLeaseTtlMs(long ms) {
        return new ServerOptions(host, port, dataDir, dbUrl, adminToken, cluster, policy, rateLimit, demo, demoSeed, agents, tls, allowRootJobs, config, advertiseUrl, ms);
    }

    /** Applies the file at start; the file decides the policy (a later {@link #withPolicy} overrides it, as --policy does). */
    public ServerOptions withConfig(Path file) {
        return new ServerOptions(host, port, dataDir, dbUrl, adminToken, cluster, null, rateLimit, demo, demoSeed, agents, tls, allowRootJobs, file, advertiseUrl, leaseTtlMs);
    }
}
