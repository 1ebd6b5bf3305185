package io.gpupool.cli;

import io.gpupool.agent.AgentLauncher;
import io.gpupool.agent.node.NodeAgent;
import io.gpupool.server.GpupoolServer;
import io.gpupool.server.ServerOptions;
import io.gpupool.server.core.AgentSettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code gpupool agent} (its settings) and {@code gpupool logs} against a real server with a real agent. */
class AgentCommandsTest {
    private static final String ADMIN = "cli-agent-admin-token-0123";

    @TempDir Path dir;

    @Test
    void logs_follow_a_job_run_by_an_agent_until_its_output_is_complete() throws Exception {
        ServerOptions o = ServerOptions.defaults().withHost("127.0.0.1").withPort(0).withDataDir(dir.resolve("server")).withAdminToken(ADMIN)
                .withRateLimit(0).withAgents(new AgentSettings(200, 10_000));
        try (GpupoolServer server = GpupoolServer.start(o, new PrintStream(new ByteArrayOutputStream()))) {
            String url = "http://127.0.0.1:" + server.port();
            server.pool().putTenant("ml", 1, 0, 0, true).join();
            String join = new ApiClient(url, ADMIN).post("/api/v1/agent-tokens", Map.of("label", "cli test"), null).path("token").asText();
            NodeAgent agent = AgentLauncher.start(AgentLauncher.Options.fake(url, join, "cli-node", dir.resolve("agent"), "2xT4"));
            try {
                long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (server.pool().snapshot().nodes().stream().noneMatch(n -> n.state().equals("ready"))) {
                    if (System.nanoTime() > deadline) throw new AssertionError("the agent did not register");
                    Thread.sleep(50);
                }
                Cli.Result submit = Cli.run("submit", "--server", url, "--token", ADMIN, "--tenant", "ml", "--gpus", "1", "--",
                        "sh", "-c", "echo step 1 on $CUDA_VISIBLE_DEVICES; sleep 1; echo step 2; echo oops >&2");
                assertThat(submit.exitCode()).as(submit.err()).isZero();
                String id = submit.out().split(" ")[1];
                Cli.Result follow = Cli.run("logs", "--server", url, "--token", ADMIN, "--follow", id);
                assertThat(follow.exitCode()).as(follow.err()).isZero();
                assertThat(follow.out()).isEqualTo("step 1 on " + agent.inventory().gpus().getFirst().uuid() + "\nstep 2\n");
                assertThat(Cli.run("logs", "--server", url, "--token", ADMIN, "--stream", "stderr", id).out()).isEqualTo("oops\n");
                assertThat(Cli.run("status", "--server", url, "--token", ADMIN, id).out()).contains("SUCCEEDED", "RUNNING", "attempt 1 on node cli-node");
                // a job that waits in the queue when the follow begins: its output is followed once it runs
                Path go = dir.resolve("go");
                Cli.Result blocker = Cli.run("submit", "--server", url, "--token", ADMIN, "--tenant", "ml", "--gpus", "2", "--",
                        "sh", "-c", "while [ ! -e '" + go + "' ]; do sleep 0.05; done");
                assertThat(blocker.exitCode()).as(blocker.err()).isZero();
                String waiting = Cli.run("submit", "--server", url, "--token", ADMIN, "--tenant", "ml", "--gpus", "1", "--",
                        "sh", "-c", "echo ran after the wait").out().split(" ")[1];
                CompletableFuture<Cli.Result> followed = CompletableFuture.supplyAsync(() -> Cli.run("logs", "--server", url, "--token", ADMIN, "--follow", waiting));
                Thread.sleep(500);
                assertThat(Cli.run("status", "--server", url, "--token", ADMIN, waiting).out()).contains("PENDING");
                assertThat(followed).isNotDone();
                Files.createFile(go);
                Cli.Result late = followed.get(60, TimeUnit.SECONDS);
                assertThat(late.exitCode()).as(late.err()).isZero();
                assertThat(late.out()).isEqualTo("ran after the wait\n");
                Cli.Result missing = Cli.run("logs", "--server", url, "--token", ADMIN, "j999");
                assertThat(missing.exitCode()).isEqualTo(2);
                assertThat(missing.err()).contains("HTTP 404");
                assertThat(Cli.run("nodes", "--server", url, "--token", ADMIN).out()).contains("cli-node ").doesNotContain("(lost)");
            } finally {
                agent.closeAndStopJobs("test over", Duration.ofSeconds(5));
            }
            // the agent is gone: after the node-lost timeout the node says so
            long deadline = System.nanoTime() + Duration.ofSeconds(40).toNanos();
            while (!Cli.run("nodes", "--server", url, "--token", ADMIN).out().contains("cli-node (lost)")) {
                if (System.nanoTime() > deadline) throw new AssertionError("cli-node is not shown lost: " + Cli.run("nodes", "--server", url, "--token", ADMIN).out());
                Thread.sleep(200);
            }
        }
    }

    @Test
    void the_agent_command_refuses_bad_settings_with_the_option_named() throws Exception {
        Cli.Result noToken = Cli.run("agent", "--server", "http://127.0.0.1:9", "--fake-gpus", "1xT4", "--work-dir", dir.toString());
        Cli.assertRefused(noToken, "token");
        Cli.Result badPolicy = Cli.run("agent", "--server", "http://127.0.0.1:9", "--token", "t", "--fake-gpus", "1xT4",
                "--memory-policy", "ignore", "--work-dir", dir.toString());
        Cli.assertRefused(badPolicy, "memory-policy");
        Cli.Result badWrapper = Cli.run("agent", "--server", "http://127.0.0.1:9", "--token", "t", "--fake-gpus", "1xT4",
                "--job-wrapper", "bash", "--work-dir", dir.toString());
        Cli.assertRefused(badWrapper, "job-wrapper");
        // the native wrapper asked for where it cannot be installed: a work directory any account may rename
        Path shared = Files.createDirectories(dir.resolve("shared"));
        Files.setPosixFilePermissions(shared, java.nio.file.attribute.PosixFilePermissions.fromString("rwxrwxrwx"));
        Cli.Result noNative = Cli.run("agent", "--server", "http://127.0.0.1:9", "--token", "t", "--fake-gpus", "1xT4",
                "--job-wrapper", "native", "--work-dir", shared.resolve("agent").toString());
        Cli.assertRefused(noNative, "job-wrapper");
        assertThat(noNative.err()).contains("may be written by other accounts");
        Cli.Result badGpus = Cli.run("agent", "--server", "http://127.0.0.1:9", "--token", "t", "--fake-gpus", "8xB200", "--work-dir", dir.toString());
        assertThat(badGpus.exitCode()).isEqualTo(2);
        assertThat(badGpus.err()).contains("--fake-gpus");
        Cli.Result badUrl = Cli.run("agent", "--server", "ftp://gpupool", "--token", "t", "--fake-gpus", "1xT4", "--work-dir", dir.toString());
        Cli.assertRefused(badUrl, "server");
        assertThat(Cli.run("agent", "--help").out()).contains("--server", "--token", "--fake-gpus", "--work-dir", "--backend");
    }

    @Test
    void the_agent_command_stops_with_one_line_and_exit_2_at_a_server_of_another_protocol_version() throws Exception {
        // a server on loopback that answers as a gpupool server of the next protocol version would
        int newer = io.gpupool.agent.protocol.AgentProtocolVersion.CURRENT + 1;
        com.sun.net.httpserver.HttpServer http = com.sun.net.httpserver.HttpServer.create(
                new java.net.InetSocketAddress("127.0.0.1", 0), 0);
        http.createContext("/healthz", ex -> {
            ex.sendResponseHeaders(200, -1);
            ex.close();
        });
        http.createContext("/api/v1/agent/register", ex -> {
            ex.getRequestBody().readAllBytes();
            ex.getResponseHeaders().add(io.gpupool.agent.protocol.AgentProtocolVersion.HEADER, Integer.toString(newer));
            ex.getResponseHeaders().add("Content-Type", "application/json");
            byte[] body = "{\"status\":422,\"message\":\"another protocol\"}".getBytes(java.nio.charset.StandardCharsets.UTF_8);
            ex.sendResponseHeaders(422, body.length);
            ex.getResponseBody().write(body);
            ex.close();
        });
        http.start();
        try {
            String url = "http://127.0.0.1:" + http.getAddress().getPort();
            // its own thread, not the common pool: with one or two cores that pool has a single worker, which the
            // waiting command would hold while the agent's HTTP client needs it
            java.util.concurrent.ExecutorService runner = java.util.concurrent.Executors.newSingleThreadExecutor();
            Cli.Result r;
            try {
                r = runner.submit(() -> Cli.run("agent", "--server", url, "--token", "join", "--fake-gpus", "1xT4",
                        "--node-name", "old-agent", "--work-dir", dir.resolve("agent").toString(), "--no-confine", "--no-fence"))
                        .get(60, TimeUnit.SECONDS);
            } finally {
                runner.shutdownNow();
            }
            assertThat(r.exitCode()).isEqualTo(2);
            assertThat(r.err()).isEqualTo("gpupool: server " + url + " speaks agent protocol " + newer + ", this agent speaks "
                    + io.gpupool.agent.protocol.AgentProtocolVersion.CURRENT + ": upgrade the agent to the server's release" + System.lineSeparator());
        } finally {
            http.stop(0);
        }
    }
}
