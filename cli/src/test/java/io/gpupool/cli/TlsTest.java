package io.gpupool.cli;

import io.gpupool.agent.AgentLauncher;
import io.gpupool.agent.node.NodeAgent;
import io.gpupool.server.GpupoolServer;
import io.gpupool.server.ServerOptions;
import io.gpupool.server.core.AgentSettings;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * HTTPS end to end on loopback, with the certificates docs/install.md makes: a server started with --tls-cert and
 * --tls-key, a real agent (fake GPUs) that registers and runs a job, and the client commands with --ca; then an
 * unknown CA, a certificate for another name, and plain HTTP against TLS (and back), each refused with one clear
 * line and nothing changed; and bad TLS options that stop the server at start.
 */
class TlsTest {
    private static final String ADMIN = "cli-tls-admin-token-0123456789";

    @TempDir static Path pki;
    @TempDir Path dir;

    /** The pool's CA and server certificate (for 127.0.0.1 only), and an unrelated CA of the same make. */
    @BeforeAll
    static void makeCertificates() throws Exception {
        makePki(Files.createDirectories(pki.resolve("pool")), "IP:127.0.0.1");
        makePki(Files.createDirectories(pki.resolve("other")), "IP:127.0.0.1");
    }

    @Test
    void an_agent_and_the_client_commands_work_over_https_and_an_unknown_ca_is_refused() throws Exception {
        Path ca = pki.resolve("pool/ca.crt");
        Path otherCa = pki.resolve("other/ca.crt");
        ServerOptions o = ServerOptions.defaults().withHost("127.0.0.1").withPort(0).withDataDir(dir.resolve("server")).withAdminToken(ADMIN)
                .withRateLimit(0).withAgents(new AgentSettings(200, 10_000))
                .withTls(ServerOptions.Tls.of(pki.resolve("pool/server.crt"), pki.resolve("pool/server.key")));
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        try (GpupoolServer server = GpupoolServer.start(o, new PrintStream(printed, true, StandardCharsets.UTF_8))) {
            String url = "https://127.0.0.1:" + server.port();
            assertThat(server.url()).isEqualTo(url);
            assertThat(printed.toString(StandardCharsets.UTF_8)).contains("listening on " + url, "dashboard: " + url + "/#token=").doesNotContain("warning");
            server.pool().putTenant("ml", 1, 0, 0, true).join();
            ApiClient admin = new ApiClient(url, ADMIN, ca);
            String join = admin.post("/api/v1/agent-tokens", Map.of("label", "tls test"), null).path("token").asText();

            // the agent command with an unknown CA stops at start, before it registers anything
            Cli.Result wrongAgent = Cli.run("agent", "--server", url, "--token", join, "--ca", otherCa.toString(), "--fake-gpus", "1xT4",
                    "--node-name", "untrusting", "--work-dir", dir.resolve("untrusting").toString());
            assertThat(wrongAgent.exitCode()).as(wrongAgent.err()).isEqualTo(2);
            assertThat(wrongAgent.err()).contains("gpupool: cannot connect to " + url + ": the server's TLS certificate is not trusted (not signed by the CA in "
                    + otherCa + "; give the CA that signed it with --ca FILE)").doesNotContain("\tat ");
            Cli.Result plainAgent = Cli.run("agent", "--server", "http://127.0.0.1:" + server.port(), "--token", join, "--fake-gpus", "1xT4",
                    "--node-name", "plain", "--work-dir", dir.resolve("plain").toString());
            assertThat(plainAgent.exitCode()).isEqualTo(2);
            assertThat(plainAgent.err()).contains("this server speaks HTTPS only: use an https:// URL");

            // the real thing: an agent trusting the pool's CA registers over HTTPS and runs a job the CLI submits
            NodeAgent agent = AgentLauncher.start(AgentLauncher.Options.fake(url, join, "tls-node", dir.resolve("agent"), "1xT4").withCa(ca));
            try {
                await("the agent registers", () -> server.pool().snapshot().nodes().stream().anyMatch(n -> n.name().equals("tls-node") && n.state().equals("ready")));
                Cli.Result submit = Cli.run("submit", "--server", url, "--token", ADMIN, "--ca", ca.toString(), "--tenant", "ml", "--gpus", "1", "--",
                        "sh", "-c", "echo over tls on $CUDA_VISIBLE_DEVICES");
                assertThat(submit.exitCode()).as(submit.err()).isZero();
                String id = submit.out().split(" ")[1];
                await("the job succeeds", () -> Cli.run("status", "--server", url, "--token", ADMIN, "--ca", ca.toString(), id).out().contains("SUCCEEDED"));
                assertThat(Cli.run("logs", "--server", url, "--token", ADMIN, "--ca", ca.toString(), id).out())
                        .isEqualTo("over tls on " + agent.inventory().gpus().getFirst().uuid() + "\n");
                Cli.Result queue = Cli.run("queue", "--server", url, "--token", ADMIN, "--ca", ca.toString());
                assertThat(queue.exitCode()).as(queue.err()).isZero();
                assertThat(queue.out()).contains("0 queued");
                assertThat(Cli.run("nodes", "--server", url, "--token", ADMIN, "--ca", ca.toString()).out()).contains("tls-node");

                // refused before a request is sent: an unknown CA, the system trust store, a name the certificate does not hold, plain HTTP
                int jobs = admin.get("/api/v1/jobs").path("jobs").size();
                Cli.Result wrongCa = Cli.run("submit", "--server", url, "--token", ADMIN, "--ca", otherCa.toString(), "--tenant", "ml", "--", "true");
                assertThat(wrongCa.exitCode()).isEqualTo(2);
                assertThat(wrongCa.err().strip()).isEqualTo("gpupool: cannot connect to " + url + ": the server's TLS certificate is not trusted (not signed by the CA in "
                        + otherCa + "; give the CA that signed it with --ca FILE)");
                Cli.Result noCa = Cli.run("submit", "--server", url, "--token", ADMIN, "--tenant", "ml", "--", "true");
                assertThat(noCa.exitCode()).isEqualTo(2);
                assertThat(noCa.err().strip()).isEqualTo("gpupool: cannot connect to " + url
                        + ": the server's TLS certificate is not trusted (signed by an unknown CA; give the CA with --ca FILE)");
                String byName = "https://localhost:" + server.port();
                Cli.Result otherName = Cli.run("submit", "--server", byName, "--token", ADMIN, "--ca", ca.toString(), "--tenant", "ml", "--", "true");
                assertThat(otherName.exitCode()).isEqualTo(2);
                assertThat(otherName.err()).contains("gpupool: cannot connect to " + byName + ": the server's TLS certificate is not for localhost");
                Cli.Result plain = Cli.run("submit", "--server", "http://127.0.0.1:" + server.port(), "--token", ADMIN, "--tenant", "ml", "--", "true");
                assertThat(plain.exitCode()).isEqualTo(2);
                assertThat(plain.err()).contains("HTTP 400: this server speaks HTTPS only: use an https:// URL");
                assertThat(admin.get("/api/v1/jobs").path("jobs").size()).isEqualTo(jobs);
                assertThat(server.pool().snapshot().nodes().stream().map(n -> n.name()).toList()).containsExactly("tls-node");

                // the load generator's own connections (not the JDK client) verify the certificate too
                Cli.Result load = Cli.run("loadgen", "--server", url, "--token", ADMIN, "--ca", ca.toString(), "--rate", "20", "--duration", "1", "--tenants", "1");
                assertThat(load.exitCode()).as(load.out() + load.err()).isZero();
                assertThat(load.out()).contains("sent 20, acknowledged 20");
            } finally {
                agent.closeAndStopJobs("test over", Duration.ofSeconds(5));
            }
        }
    }

    @Test
    void https_to_a_plain_http_server_says_so() {
        ServerOptions o = ServerOptions.defaults().withHost("127.0.0.1").withPort(0).withDataDir(dir.resolve("plain")).withAdminToken(ADMIN);
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        try (GpupoolServer plain = GpupoolServer.start(o, new PrintStream(printed, true, StandardCharsets.UTF_8))) {
            assertThat(printed.toString(StandardCharsets.UTF_8)).contains("listening on http://127.0.0.1:").doesNotContain("warning"); // loopback only
            String url = "https://127.0.0.1:" + plain.port();
            Cli.Result r = Cli.run("queue", "--server", url, "--token", ADMIN, "--ca", pki.resolve("pool/ca.crt").toString());
            assertThat(r.exitCode()).isEqualTo(2);
            assertThat(r.err().strip()).isEqualTo("gpupool: cannot connect to " + url + ": the server does not speak TLS there "
                    + "(a plain HTTP server: use http://, or start the server with --tls-cert and --tls-key)");
        }
    }

    @Test
    void bad_tls_options_stop_the_server_at_start_naming_the_option_and_file() throws IOException {
        Path cert = pki.resolve("pool/server.crt");
        Path key = pki.resolve("pool/server.key");
        Path garbage = Files.writeString(dir.resolve("garbage.key"), "not a key at all\n");
        Path data = dir.resolve("data");
        List<String> start = List.of("server", "--host", "127.0.0.1", "--port", "0", "--data", data.toString(), "--admin-token", ADMIN);

        Cli.Result noKey = server(start, "--tls-cert", cert.toString());
        assertThat(noKey.exitCode()).isEqualTo(2);
        assertThat(noKey.err().strip()).isEqualTo("gpupool: --tls-key: is required with --tls-cert (the certificate's private key, PEM)");
        Cli.Result noCert = server(start, "--tls-key", key.toString());
        assertThat(noCert.exitCode()).isEqualTo(2);
        assertThat(noCert.err()).contains("--tls-cert: is required with --tls-key");
        Cli.Result badKey = server(start, "--tls-cert", cert.toString(), "--tls-key", garbage.toString());
        assertThat(badKey.exitCode()).isEqualTo(2);
        assertThat(badKey.err().strip()).isEqualTo("gpupool: --tls-key " + garbage
                + ": holds no PEM private key ('-----BEGIN PRIVATE KEY-----', or RSA/EC PRIVATE KEY)");
        Cli.Result otherKey = server(start, "--tls-cert", cert.toString(), "--tls-key", pki.resolve("other/server.key").toString());
        assertThat(otherKey.exitCode()).isEqualTo(2);
        assertThat(otherKey.err()).contains("--tls-key " + pki.resolve("other/server.key") + ": this private key does not belong to the first certificate in " + cert);
        Cli.Result noFile = server(start, "--tls-cert", dir.resolve("missing.crt").toString(), "--tls-key", key.toString());
        assertThat(noFile.exitCode()).isEqualTo(2);
        assertThat(noFile.err().strip()).isEqualTo("gpupool: --tls-cert " + dir.resolve("missing.crt") + ": no such file");
        // refused before anything was opened: no store was made
        assertThat(data).doesNotExist();
        assertThat(Cli.run("server", "--help").out()).contains("--tls-cert", "--tls-key");
        assertThat(Cli.run("agent", "--help").out()).contains("--ca");
        assertThat(Cli.run("submit", "--help").out()).contains("--ca");
    }

    private static Cli.Result server(List<String> start, String... tls) {
        List<String> args = new java.util.ArrayList<>(start);
        args.addAll(List.of(tls));
        return Cli.run(args.toArray(String[]::new));
    }

    private static void await(String what, BooleanSupplier done) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) throw new AssertionError("timed out waiting until " + what);
            Thread.sleep(50);
        }
    }

    /** Runs the three openssl commands of docs/install.md ("TLS with a private CA in three commands") in {@code dir}. */
    static void makePki(Path dir, String san) throws IOException, InterruptedException {
        String doc = Files.readString(Path.of("..", "docs", "install.md"));
        int section = doc.indexOf("TLS with a private CA in three commands");
        assertThat(section).as("the section in docs/install.md").isPositive();
        int from = doc.indexOf("```bash\n", section) + "```bash\n".length();
        List<String> commands = doc.substring(from, doc.indexOf("```", from)).lines()
                .filter(l -> l.startsWith("openssl ") && !l.startsWith("openssl verify")).toList();   // the three; the check after them is ours
        assertThat(commands).hasSize(3);
        String script = "SAN='" + san + "'\n" + String.join("\n", commands);
        Process p = new ProcessBuilder("bash", "-euo", "pipefail", "-c", script).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
    }
}
