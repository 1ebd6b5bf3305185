package io.gpupool.cli;

import io.gpupool.server.GpupoolServer;
import io.gpupool.server.ServerOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** gpupool loadgen against a real server on loopback: every submission acknowledged once, warm-up not counted. */
class LoadgenCommandTest {
    private static final String ADMIN = "cli-admin-token-0123456789";

    @TempDir Path dir;

    @Test
    void loadgen_submits_at_its_rate_over_keep_alive_connections_and_counts_only_the_measured_part() {
        ServerOptions o = ServerOptions.defaults().withHost("127.0.0.1").withPort(0).withDataDir(dir).withAdminToken(ADMIN)
                .withCluster("1x4:T4").withRateLimit(0);
        try (GpupoolServer server = GpupoolServer.start(o, new PrintStream(new ByteArrayOutputStream()))) {
            String url = "http://127.0.0.1:" + server.port();
            Cli.Result r = Cli.run("loadgen", "--server", url, "--token", ADMIN, "--rate", "100", "--duration", "2", "--warmup", "1",
                    "--tenants", "2", "--max-in-flight", "8");
            assertThat(r.exitCode()).as(r.err()).isZero();
            assertThat(r.out()).contains("warm-up: 100 submissions", "sent 200, acknowledged 200", "{201=200}");
            // warm-up and measured submissions are all stored, each once (unique Idempotency-Keys)
            long deadline = System.nanoTime() + 10_000_000_000L;
            int jobs;
            do {
                var snapshot = server.pool().snapshot(); // refreshed by the engine loop
                jobs = snapshot.pendingCount() + snapshot.runningCount();
            } while (jobs != 300 && System.nanoTime() < deadline && sleep());
            assertThat(jobs).isEqualTo(300);
            Cli.Result bad = Cli.run("loadgen", "--server", url, "--token", ADMIN, "--warmup", "-1");
            Cli.assertRefused(bad, "warmup");
        }
    }

    private static boolean sleep() {
        try {
            Thread.sleep(100);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return true;
    }
}
