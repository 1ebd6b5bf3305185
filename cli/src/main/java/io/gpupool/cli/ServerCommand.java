package io.gpupool.cli;

import io.gpupool.server.ReplicatedServer;
import io.gpupool.server.ServerOptions;
import io.gpupool.server.core.AgentSettings;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/** Runs the scheduler as a service: REST API, durable store, metrics, live dashboard. */
@Command(name = "server", description = {
        "Run the gpupool service: REST API and live dashboard on one port, durable job store, Prometheus metrics.",
        "With --demo: node agents with fake GPUs in this process run a steady synthetic workload from a few tenants as real processes (open the printed link)."})
public final class ServerCommand implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Option(names = "--port", defaultValue = "8080", paramLabel = "N", description = "HTTP (or HTTPS) port (default: ${DEFAULT-VALUE}; 0 = any free port).")
    int port;

    @Option(names = "--host", defaultValue = "0.0.0.0", paramLabel = "ADDR", description = "Address to listen on (default: ${DEFAULT-VALUE}).")
    String host;

    @Option(names = "--data", defaultValue = "gpupool-data", paramLabel = "DIR", description = "Embedded store directory (default: ./${DEFAULT-VALUE}).")
    Path data;

    @Option(names = "--db", paramLabel = "JDBC_URL", description = "Use this database instead of the embedded one, e.g. jdbc:postgresql://db:5432/gpupool?user=u&password=p.")
    String db;

    @Option(names = "--admin-token", paramLabel = "T", description = "Admin token to accept (at least 16 characters; default: $GPUPOOL_ADMIN_TOKEN, else one is minted and printed at first start).")
    String adminToken;

    @Option(names = "--cluster", paramLabel = "SPEC", description = "Nodes present without an agent: NODESxGPUS:MODEL[,...] or a YAML cluster file.")
    String cluster;

    @Option(names = "--config", paramLabel = "FILE",
            description = {"Configuration tree, YAML (docs/configuration.md): policy with its settings, placement, tenants, predictor, default run time.",
                    "Applied at every start over the defaults: the file wins over what an admin last saved with PUT /api/v1/config;",
                    "tenants it names are created or updated, others stay. --policy and --predictor override the file's."})
    Path config;

    @Option(names = "--policy", paramLabel = "NAME",
            description = "Queue policy until an admin changes it (default: the --config file's, else fair-share).")
    String policy;

    @Option(names = "--rate-limit", defaultValue = "50", paramLabel = "PER_SEC", description = "Requests per second per token; 0 = unlimited (default: ${DEFAULT-VALUE}).")
    double rateLimit;

    @Option(names = "--tls-cert", paramLabel = "FILE",
            description = "Serve HTTPS on --port with this PEM certificate (the server's own first, then its chain); needs --tls-key (docs/install.md, \"TLS\").")
    Path tlsCert;

    @Option(names = "--tls-key", paramLabel = "FILE",
            description = "The certificate's private key, PEM (PKCS#8 'PRIVATE KEY', or 'RSA PRIVATE KEY'/'EC PRIVATE KEY'), unencrypted; needs --tls-cert.")
    Path tlsKey;

    @Option(names = "--predictor", paramLabel = "NAME",
            description = "Run-time predictor for jobs without an estimate (qssf, backfill): history, gbt, global-median or none; learns as jobs finish and is kept in the store (default: the --config file's, else history).")
    String predictor;

    @Option(names = "--demo", description = "Demo mode: node agents with fake GPUs in this process (" + ServerOptions.DEMO_CLUSTER
            + " unless --cluster) running a synthetic workload from several tenants as real processes.")
    boolean demo;

    @Option(names = "--agent-report-interval", defaultValue = "5", paramLabel = "SEC",
            description = "Longest time between a node agent's reports; a report with nothing to say waits this long for new work (default: ${DEFAULT-VALUE}).")
    double reportIntervalSec;

    @Option(names = "--node-lost-timeout", defaultValue = "30", paramLabel = "SEC",
            description = "A node whose agent has not reported for this long is lost and gets no new work; it is also the agents' lease: "
                    + "an agent without an applied report for this long stops its jobs (default: ${DEFAULT-VALUE}).")
    double nodeLostTimeoutSec;

    @Option(names = "--fence-margin", defaultValue = "5", paramLabel = "SEC",
            description = "How much longer than the lease and the agent's kill grace a lost node's jobs wait before they run elsewhere: "
                    + "room for a slow or starved agent machine (default: ${DEFAULT-VALUE}).")
    double fenceMarginSec;

    @Option(names = "--allow-root-jobs", description = "Let tokens and jobs name root as their Unix account (off: jobs never run as root; "
            + "agents need their own --allow-root-jobs too).")
    boolean allowRootJobs;

    @Option(names = "--advertise-url", paramLabel = "URL",
            description = "Where clients and agents reach this server, e.g. https://gpu-ctl-2:8080; a standby replica names the active's "
                    + "(default: the scheme, this machine's name or --host, and the port).")
    String advertiseUrl;

    @Option(names = "--lease-ttl", defaultValue = "3", paramLabel = "SEC",
            description = {"With PostgreSQL, several servers on one database form one service: one active replica, the others standbys.",
                    "A standby takes over this long after the active's last lease renewal, or at once when the active's database session ends "
                            + "(default: ${DEFAULT-VALUE})."})
    double leaseTtlSec;

    @Override
    public Integer call() throws InterruptedException {
        String token = adminToken != null ? adminToken : System.getenv("GPUPOOL_ADMIN_TOKEN");
        if (token != null && token.isBlank()) token = null;
        // beside --config, a flag given overrides the file's value; a flag left out leaves it (null)
        ServerOptions o = new ServerOptions(host, port, data, db, token, cluster, policy == null && config == null ? "fair-share" : policy, rateLimit, demo, 1,
                new AgentSettings(Math.round(reportIntervalSec * 1000), Math.round(nodeLostTimeoutSec * 1000), Math.round(fenceMarginSec * 1000)),
                ServerOptions.Tls.of(tlsCert, tlsKey), allowRootJobs, config, advertiseUrl, Math.round(leaseTtlSec * 1000));
        if (o.leaseTtlMs() < 500) throw new io.gpupool.model.SpecException("--lease-ttl", "lease-ttl", "must be at least 0.5 seconds, got " + leaseTtlSec);
        ReplicatedServer server = ReplicatedServer.start(o, predictor, System.out);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            stopped.countDown();
        }, "gpupool-shutdown"));
        stopped.await();
        return 0;
    }
}
