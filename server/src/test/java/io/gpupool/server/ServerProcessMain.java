package io.gpupool.server;

import io.gpupool.server.core.AgentSettings;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Test fixture: runs a server as its own process (for the crash and fault tests, which kill it with SIGKILL).
 * Arguments: [--db=JDBC_URL] [--lease-ttl-ms=N] DATA_DIR ADMIN_TOKEN CLUSTER_SPEC [PORT REPORT_INTERVAL_MS NODE_LOST_TIMEOUT_MS
 * [FENCE_MARGIN_MS [HOST]]]; CLUSTER_SPEC "-" for no static nodes; HOST 127.0.0.1 unless given; without --db
 * the store is the embedded SQLite under DATA_DIR. On PostgreSQL it is one replica (active, or standby until it takes over).
 */
public final class ServerProcessMain {
    private ServerProcessMain() {}

    public static void main(String[] argv) throws InterruptedException {
        List<String> args = new ArrayList<>(List.of(argv));
        String db = null;
        long leaseTtlMs = ServerOptions.DEFAULT_LEASE_TTL_MS;
        if (!args.isEmpty() && args.getFirst().startsWith("--db=")) db = args.removeFirst().substring("--db=".length());
        if (!args.isEmpty() && args.getFirst().startsWith("--lease-ttl-ms=")) leaseTtlMs = Long.parseLong(args.removeFirst().substring("--lease-ttl-ms=".length()));
        ServerOptions o = ServerOptions.defaults().withHost(args.size() > 7 ? args.get(7) : "127.0.0.1").withPort(0).withDataDir(Path.of(args.get(0)))
                .withAdminToken(args.get(1)).withCluster(args.get(2).equals("-") ? null : args.get(2)).withRateLimit(0);
        if (db != null) o = o.withDb(db);
        o = o.withLeaseTtlMs(leaseTtlMs);
        if (args.size() > 3) {
            long margin = args.size() > 6 ? Long.parseLong(args.get(6)) : AgentSettings.DEFAULT_FENCE_MARGIN_MS;
            o = o.withPort(Integer.parseInt(args.get(3))).withAgents(new AgentSettings(Long.parseLong(args.get(4)), Long.parseLong(args.get(5)), margin));
        }
        ReplicatedServer.start(o, null, System.out);
        Thread.currentThread().join();
    }
}
