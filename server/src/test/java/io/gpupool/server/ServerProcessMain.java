package io.gpupool.server;

import java.nio.file.Path;

/**
 * Test fixture: runs a server as its own process (for the crash test, which kills it with SIGKILL).
 * Arguments: DATA_DIR ADMIN_TOKEN CLUSTER_SPEC.
 */
public final class ServerProcessMain {
    private ServerProcessMain() {}

    public static void main(String[] args) throws InterruptedException {
        ServerOptions o = ServerOptions.defaults().withHost("127.0.0.1").withPort(0).withDataDir(Path.of(args[0]))
                .withAdminToken(args[1]).withCluster(args[2]).withRateLimit(0);
        GpupoolServer.start(o, System.out);
        Thread.currentThread().join();
    }
}
