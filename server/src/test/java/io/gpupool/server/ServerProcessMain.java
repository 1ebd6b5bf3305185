package io.gpupool.server;

import io.gpupool.server.core.AgentSettings;

import java.nio.file.Path;

/**
 * Test fixture: runs a server as its own process (for the crash and fault tests, which kill it with SIGKILL).
 * Arguments: DATA_DIR ADMIN_TOKEN CLUSTER_SPEC [PORT REPORT_INTERVAL_MS NODE_LOST_TIMEOUT_MS [FENCE_MARGIN_MS [HOST]]];
 * CLUSTER_SPEC "-" for no static nodes; HOST 127.0.0.1 unless given.
 */
public final class ServerProcessMain {
    private ServerProcessMain() {}

    public static void main(String[] args) throws InterruptedException {
        ServerOptions o = ServerOptions.defaults().withHost(args.length > 7 ? args[7] : "127.0.0.1").withPort(0).withDataDir(Path.of(args[0]))
                .withAdminToken(args[1]).withCluster(args[2].equals("-") ? null : args[2]).withRateLimit(0);
        if (args.length > 3) {
            long margin = args.length > 6 ? Long.parseLong(args[6]) : AgentSettings.DEFAULT_FENCE_MARGIN_MS;
            o = o.withPort(Integer.parseInt(args[3])).withAgents(new AgentSettings(Long.parseLong(args[4]), Long.parseLong(args[5]), margin));
        }
        GpupoolServer.start(o, System.out);
        Thread.currentThread().join();
    }
}
