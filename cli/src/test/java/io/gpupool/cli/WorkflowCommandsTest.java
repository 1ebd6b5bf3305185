package io.gpupool.cli;

import io.gpupool.server.GpupoolServer;
import io.gpupool.server.ServerOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** submit --array / --dependency, queue and status of an array, cancel of an array, hold, release, update, requeue. */
class WorkflowCommandsTest {
    private static final String ADMIN = "cli-admin-token-0123456789";

    @TempDir Path dir;

    @Test
    void arrays_dependencies_and_holds_from_the_command_line() {
        ServerOptions o = ServerOptions.defaults().withHost("127.0.0.1").withPort(0).withDataDir(dir).withAdminToken(ADMIN)
                .withCluster("1x4:T4").withRateLimit(0).withPolicy("fcfs");
        try (GpupoolServer server = GpupoolServer.start(o, new PrintStream(new ByteArrayOutputStream()))) {
            String url = "http://127.0.0.1:" + server.port();
            server.pool().putTenant("ml", 1, 0, 0, true).join();
            String[] c = {"--server", url, "--token", ADMIN};

            Cli.Result sweep = Cli.run(Cli.cat(new String[] {"submit"}, c, "--tenant", "ml", "--name", "sweep", "--array", "0-9%2", "--", "python", "train.py"));
            assertThat(sweep.exitCode()).as(sweep.err()).isZero();
            assertThat(sweep.out()).matches("submitted array j\\d+ \\(10 tasks, at most 2 at once\\) for tenant ml\\s*");
            String array = sweep.out().split(" ")[2];
            // the engine starts two tasks at its next round, and `queue` reads the pool view the loop takes every 250 ms
            Cli.Result queue = Cli.until(() -> Cli.run(Cli.cat(new String[] {"queue"}, c)), r -> r.out().contains(array + "[8 pending, 2 running, %2]"));
            assertThat(queue.out()).contains(array + "[8 pending, 2 running, %2]");
            Cli.Result status = Cli.run(Cli.cat(new String[] {"status"}, c, array));
            assertThat(status.out()).contains("10 tasks, at most 2 at once", "2 running", "8 pending");

            Cli.Result child = Cli.run(Cli.cat(new String[] {"submit"}, c, "--tenant", "ml", "--dependency", "afterok:" + array, "--kill-on-invalid-dep", "no", "--", "x"));
            assertThat(child.exitCode()).as(child.err()).isZero();
            String job = child.out().split(" ")[1];
            assertThat(Cli.run(Cli.cat(new String[] {"hold"}, c, job)).out()).contains(job + " PENDING (held: on hold");
            assertThat(Cli.run(Cli.cat(new String[] {"update"}, c, job, "--priority", "5", "--dependency", "")).out()).contains(job + " PENDING (held: on hold");
            assertThat(Cli.run(Cli.cat(new String[] {"release"}, c, job)).exitCode()).isZero();
            Cli.Result again = Cli.run(Cli.cat(new String[] {"release"}, c, job));
            assertThat(again.exitCode()).isEqualTo(2);
            assertThat(again.err()).contains("HTTP 409", "not held");
            Cli.Result bad = Cli.run(Cli.cat(new String[] {"submit"}, c, "--tenant", "ml", "--dependency", "afterok:j999", "--", "x"));
            assertThat(bad.exitCode()).isEqualTo(2);
            assertThat(bad.err()).contains("HTTP 422", "dependency", "j999");

            assertThat(Cli.run(Cli.cat(new String[] {"requeue"}, c, array + "_0")).out()).contains(array + "_0");
            assertThat(Cli.run(Cli.cat(new String[] {"cancel"}, c, array)).out()).contains("cancelled 10 tasks of array " + array);
        }
    }
}
