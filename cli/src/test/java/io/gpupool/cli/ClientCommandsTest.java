package io.gpupool.cli;

import io.gpupool.server.GpupoolServer;
import io.gpupool.server.ServerOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** submit, status, queue, nodes, top, cancel and token against a real server on loopback. */
class ClientCommandsTest {
    private static final String ADMIN = "cli-admin-token-0123456789";

    @TempDir Path dir;

    @Test
    void the_client_commands_drive_a_running_server() {
        ServerOptions o = ServerOptions.defaults().withHost("127.0.0.1").withPort(0).withDataDir(dir).withAdminToken(ADMIN)
                .withCluster("1x4:T4").withRateLimit(0);
        try (GpupoolServer server = GpupoolServer.start(o, new PrintStream(new ByteArrayOutputStream()))) {
            String url = "http://127.0.0.1:" + server.port();
            server.pool().putTenant("ml", 1, 0, 0, true).join();

            Cli.Result submit = Cli.run("submit", "--server", url, "--token", ADMIN, "--tenant", "ml", "--gpus", "4", "--name", "big",
                    "--idempotency-key", "k1", "--", "python", "train.py");
            assertThat(submit.exitCode()).as(submit.err()).isZero();
            assertThat(submit.out()).matches("submitted j\\d+ \\(PENDING\\) for tenant ml\\s*");
            String id = submit.out().split(" ")[1];
            Cli.Result second = Cli.run("submit", "--server", url, "--token", ADMIN, "--tenant", "ml", "--gpus", "1", "--", "python", "eval.py");
            String waiting = second.out().split(" ")[1];

            Cli.Result status = Cli.run("status", "--server", url, "--token", ADMIN, id);
            assertThat(status.out()).contains(id, "tenant ml", "big", "SUBMITTED");
            Cli.Result queue = Cli.run("queue", "--server", url, "--token", ADMIN);
            assertThat(queue.exitCode()).isZero();
            assertThat(queue.out()).contains("queued", "running (policy fair-share)");
            assertThat(Cli.run("nodes", "--server", url, "--token", ADMIN).out()).contains("t4-0000", "T4");
            // top reads the pool view, a snapshot taken every 250 ms: wait for one taken after the submissions
            assertThat(Cli.until(() -> Cli.run("top", "--server", url, "--token", ADMIN), r -> r.out().contains("ml")).out())
                    .contains("policy fair-share", "ml");

            assertThat(Cli.run("cancel", "--server", url, "--token", ADMIN, waiting).out()).contains("cancelled " + waiting + " (CANCELLED)");
            Cli.Result again = Cli.run("cancel", "--server", url, "--token", ADMIN, waiting);
            assertThat(again.exitCode()).isEqualTo(2);
            assertThat(again.err()).contains("HTTP 409");
            Cli.Result bad = Cli.run("submit", "--server", url, "--token", ADMIN, "--tenant", "ml", "--gpus", "2", "--milli", "500", "--", "x");
            assertThat(bad.exitCode()).isEqualTo(2);
            assertThat(bad.err()).contains("HTTP 422", "gpuMilli");
            Cli.Result policy = Cli.run("submit", "--server", url, "--token", ADMIN, "--tenant", "ml", "--restart-policy", "fail",
                    "--work-dir", "/srv/runs/eval", "--output", "json", "--", "python", "eval.py");
            assertThat(policy.exitCode()).as(policy.err()).isZero();
            assertThat(policy.out()).contains("\"restartPolicy\" : \"fail\"", "\"workDir\" : \"/srv/runs/eval\"");
            Cli.Result host = Cli.run("submit", "--server", url, "--token", ADMIN, "--tenant", "ml", "--cpu", "2000", "--host-mem", "4096",
                    "--output", "json", "--", "python", "prep.py");
            assertThat(host.exitCode()).as(host.err()).isZero();
            assertThat(host.out()).contains("\"cpuMilli\" : 2000", "\"hostMemMib\" : 4096");
            Cli.Result tooMuchCpu = Cli.run("submit", "--server", url, "--token", ADMIN, "--tenant", "ml", "--cpu", "-5", "--", "x");
            assertThat(tooMuchCpu.exitCode()).isEqualTo(2);
            assertThat(tooMuchCpu.err()).contains("HTTP 422", "cpuMilli");
            Cli.Result badPolicy = Cli.run("submit", "--server", url, "--token", ADMIN, "--tenant", "ml", "--restart-policy", "retry", "--", "x");
            assertThat(badPolicy.exitCode()).isEqualTo(2);
            assertThat(badPolicy.err()).contains("HTTP 422", "restartPolicy", "retry");
            // --time takes Slurm's formats; the job keeps the limit in its canonical form
            Cli.Result limited = Cli.run("submit", "--server", url, "--token", ADMIN, "--tenant", "ml", "--time", "1-2:03", "--output", "json",
                    "--", "python", "long.py");
            assertThat(limited.exitCode()).as(limited.err()).isZero();
            assertThat(limited.out()).contains("\"timeLimit\" : \"1-02:03:00\"");
            String limitedId = limited.out().replaceAll("(?s).*\"id\" : \"(j\\d+)\".*", "$1");
            assertThat(Cli.run("status", "--server", url, "--token", ADMIN, limitedId).out()).contains("limit    1-02:03:00");
            Cli.Result badTime = Cli.run("submit", "--server", url, "--token", ADMIN, "--tenant", "ml", "--time", "soon", "--", "x");
            assertThat(badTime.exitCode()).isEqualTo(2);
            assertThat(badTime.err()).contains("--time", "'soon' is not a time limit");

            // a member token bound to a Unix account: its jobs run as that account, whatever they ask
            Cli.Result token = Cli.run("token", "--server", url, "--token", ADMIN, "ml", "--unix-user", "alice", "--label", "ci");
            assertThat(token.exitCode()).as(token.err()).isZero();
            assertThat(token.err()).contains("jobs run as alice");
            String alice = token.out().strip();
            Cli.Result hers = Cli.run("submit", "--server", url, "--token", alice, "--gpus", "1", "--output", "json", "--", "id", "-u");
            assertThat(hers.exitCode()).as(hers.err()).isZero();
            assertThat(hers.out()).contains("\"runAs\" : \"alice\"");
            Cli.Result asRoot = Cli.run("token", "--server", url, "--token", ADMIN, "ml", "--unix-user", "root");
            assertThat(asRoot.exitCode()).isEqualTo(2);
            assertThat(asRoot.err()).contains("HTTP 403", "--allow-root-jobs");
        }
        Cli.Result down = Cli.run("status", "--server", "http://127.0.0.1:9", "--token", ADMIN, "j1");
        assertThat(down.exitCode()).isEqualTo(2);
        assertThat(down.err()).contains("cannot connect");
    }
}
