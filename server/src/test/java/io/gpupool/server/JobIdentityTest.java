package io.gpupool.server;

import io.gpupool.agent.AgentLauncher;
import io.gpupool.agent.node.NodeAgent;
import io.gpupool.server.core.AgentSettings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Stream;

import static io.gpupool.server.TestServer.ADMIN;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Issue 14, must show 1: two tenants whose member tokens are bound to two Unix accounts this test creates. A root
 * agent runs each tenant's job as its account: tenant B's job runs with its own uid and HOME whatever it asks for,
 * cannot read tenant A's working directory or output, and cannot signal A's processes; and no request field gets a
 * member uid 0 or another account.
 */
class JobIdentityTest {
    private final List<String> accounts = new ArrayList<>();
    private Path dir;

    @BeforeEach
    void createAccounts() throws Exception {
        assumeTrue(io.gpupool.agent.run.UnixAccount.effectiveUid() == 0, "switching accounts needs root (CI runs as root)");
        String suffix = Integer.toString(ThreadLocalRandom.current().nextInt(100_000, 999_999));
        for (String who : List.of("a", "b")) {
            String name = "gpt" + who + suffix;
            run("useradd", "--no-create-home", "--home-dir", "/nonexistent-" + name, "--shell", "/usr/sbin/nologin", name);
            accounts.add(name);
        }
        // a work directory every account may traverse (a JUnit @TempDir is 0700): as an agent's /var/lib/gpupool
        dir = Files.createTempDirectory(Path.of("/tmp"), "gpupool-identity-");
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx--x--x"));
    }

    @AfterEach
    void removeAccounts() throws Exception {
        for (String a : accounts) {
            new ProcessBuilder("pkill", "-KILL", "-u", a).start().waitFor();
            run("userdel", a);
        }
        if (dir != null) {
            try (Stream<Path> s = Files.walk(dir)) {
                for (Path p : s.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
            }
        }
    }

    @Test
    void each_tenants_job_runs_as_its_account_and_cannot_reach_the_others() throws Exception {
        String userA = accounts.get(0), userB = accounts.get(1);
        int uidA = uid(userA), uidB = uid(userB);
        ServerOptions o = TestServer.options(dir.resolve("server")).withCluster(null).withAgents(new AgentSettings(200, 10_000));
        NodeAgent agent = null;
        try (TestServer s = TestServer.start(o)) {
            String join = s.post("/api/v1/agent-tokens", ADMIN, Map.of()).text("token");
            Path work = dir.resolve("node");
            agent = AgentLauncher.start(AgentLauncher.Options.fake(s.base, join, "ident-1", work, "2xA100-80GB")
                    .withKillGrace(Duration.ofMillis(500)).withUnboundAccount("nobody"));
            TestServer.eventually("the node is ready", () -> s.get("/api/v1/nodes", ADMIN).body().path("nodes").findValuesAsText("state").contains("ready"));
            String tokenA = tenantBoundTo(s, "ta", userA), tokenB = tenantBoundTo(s, "tb", userB);

            // A: writes a secret into its working directory and its output, then waits to be signalled
            String jobA = s.post("/api/v1/jobs", tokenA, Map.of("numGpus", 1, "command", List.of("sh", "-c",
                    "echo secret-of-a > secret.txt; echo output-of-a; echo \"uid=$(id -u) home=$HOME\"; exec sleep 120"))).text("id");
            assertThat(s.get("/api/v1/jobs/" + jobA, tokenA).body().path("runAs").asText()).isEqualTo(userA);
            Path dirA = work.resolve("jobs").resolve(jobA + ".1@" + s.get("/api/v1/jobs/" + jobA, ADMIN).body().path("submittedMs").asLong());
            TestServer.eventually(Duration.ofSeconds(30), "A's job runs", () -> logs(s, tokenA, jobA).contains("uid="));
            assertThat(logs(s, tokenA, jobA)).contains("uid=" + uidA + " home=/nonexistent-" + userA);
            long sleepOfA = processOf(uidA, "sleep").orElseThrow(() -> new AssertionError("A's sleep is not running as " + userA));
            assertThat(Files.readString(dirA.resolve("work/secret.txt"))).isEqualTo("secret-of-a\n");
            assertThat(Files.getAttribute(dirA.resolve("work"), "unix:uid")).isEqualTo(uidA);
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dirA.resolve("stdout.log")))).isEqualTo("rw-------");

            // B: asks for root's HOME and name in its environment, then tries A's files and A's process
            String probe = String.join("; ",
                    "echo \"uid=$(id -u) home=$HOME user=$USER\"",
                    "cat " + dirA.resolve("work/secret.txt") + " && echo READ-SECRET",
                    "cat " + dirA.resolve("stdout.log") + " && echo READ-OUTPUT",
                    "ls " + dirA.resolve("work") + " && echo LISTED-WORKDIR",
                    "ls " + dirA + " && echo LISTED-JOBDIR",
                    "kill -TERM " + sleepOfA + " && echo SIGNALLED",
                    "echo done");
            String jobB = s.post("/api/v1/jobs", tokenB, Map.of("numGpus", 1, "env", Map.of("HOME", "/root", "USER", "root"),
                    "command", List.of("sh", "-c", probe))).text("id");
            TestServer.eventually(Duration.ofSeconds(30), "B's job ends", () -> s.get("/api/v1/jobs/" + jobB, tokenB).body().path("state").asText().equals("SUCCEEDED"));
            TestServer.eventually(Duration.ofSeconds(10), "B's output is complete", () -> logs(s, tokenB, jobB).contains("done"));
            String outB = logs(s, tokenB, jobB);
            assertThat(outB).contains("uid=" + uidB + " home=/nonexistent-" + userB + " user=" + userB)
                    .doesNotContain("secret-of-a", "output-of-a", "READ-SECRET", "READ-OUTPUT", "LISTED-WORKDIR", "LISTED-JOBDIR", "SIGNALLED");
            TestServer.eventually(Duration.ofSeconds(10), "B's errors are in", () -> errors(s, tokenB, jobB).contains("kill"));
            assertThat(errors(s, tokenB, jobB)).contains("Permission denied").contains("Operation not permitted");
            assertThat(ProcessHandle.of(sleepOfA).map(ProcessHandle::isAlive)).as("A's process survives B's signal").contains(true);
            assertThat(s.get("/api/v1/jobs/" + jobA, tokenA).body().path("state").asText()).isEqualTo("RUNNING");

            // no request field gets a member root or another account
            Map<String, Object> job = Map.of("numGpus", 1, "command", List.of("id"));
            assertThat(s.post("/api/v1/jobs", tokenB, with(job, "runAs", "root")).status()).isEqualTo(403);
            assertThat(s.post("/api/v1/jobs", tokenB, with(job, "runAs", userA)).status()).isEqualTo(403);
            assertThat(s.post("/api/v1/jobs", tokenB, with(job, "runAs", "0")).status()).isEqualTo(422);
            assertThat(s.post("/api/v1/jobs", tokenB, with(job, "tenant", "ta")).status()).isEqualTo(403);
            String unbound = s.tenantWithToken("tc", 1);
            assertThat(s.post("/api/v1/jobs", unbound, with(job, "runAs", userB)).status()).isEqualTo(403);
            assertThat(s.post("/api/v1/tenants/tb/tokens", ADMIN, Map.of("unixUser", "root")).status()).isEqualTo(403);
            assertThat(s.post("/api/v1/tenants/tb/tokens", tokenB, Map.of("unixUser", userB)).status()).isEqualTo(403);
            // an admin may name root only on a server started with --allow-root-jobs
            assertThat(s.post("/api/v1/jobs", ADMIN, with(with(job, "tenant", "tb"), "runAs", "root")).status()).isEqualTo(403);
            // a job of an unbound token runs as the agent's unbound-job account, never as root
            String jobC = s.post("/api/v1/jobs", unbound, Map.of("numGpus", 1, "command", List.of("sh", "-c", "echo uid=$(id -u)"))).text("id");
            TestServer.eventually(Duration.ofSeconds(30), "C's output", () -> logs(s, unbound, jobC).contains("uid="));
            assertThat(logs(s, unbound, jobC)).contains("uid=" + uid("nobody"));

            assertThat(s.delete("/api/v1/jobs/" + jobA, tokenA).status()).isEqualTo(200);
            TestServer.eventually(Duration.ofSeconds(30), "A's process is gone", () -> ProcessHandle.of(sleepOfA).map(h -> !h.isAlive()).orElse(true));
        } finally {
            if (agent != null) agent.close();
        }
    }

    private static String tenantBoundTo(TestServer s, String tenant, String account) {
        assertThat(s.post("/api/v1/tenants", ADMIN, Map.of("name", tenant)).status()).isEqualTo(201);
        TestServer.Reply r = s.post("/api/v1/tenants/" + tenant + "/tokens", ADMIN, Map.of("unixUser", account));
        assertThat(r.status()).as(r.body().toString()).isEqualTo(201);
        assertThat(r.text("unixUser")).isEqualTo(account);
        assertThat(s.get("/api/v1/whoami", r.text("token")).text("unixUser")).isEqualTo(account);
        return r.text("token");
    }

    private static String logs(TestServer s, String token, String id) {
        return s.get("/api/v1/jobs/" + id + "/logs", token).body().path("text").asText();
    }

    private static String errors(TestServer s, String token, String id) {
        return s.get("/api/v1/jobs/" + id + "/logs?stream=stderr", token).body().path("text").asText();
    }

    private static Map<String, Object> with(Map<String, Object> m, String k, Object v) {
        Map<String, Object> out = new java.util.LinkedHashMap<>(m);
        out.put(k, v);
        return out;
    }

    /** The pid of a process of {@code uid} running {@code comm}. */
    private static Optional<Long> processOf(int uid, String comm) throws IOException {
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            return procs.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit)).filter(p -> {
                try {
                    return Files.readString(p.resolve("comm")).strip().equals(comm)
                            && Files.readAllLines(p.resolve("status")).stream().anyMatch(l -> l.startsWith("Uid:") && l.split("\\s+")[1].equals(Integer.toString(uid)));
                } catch (IOException e) {
                    return false;
                }
            }).map(p -> Long.parseLong(p.getFileName().toString())).findFirst();
        }
    }

    private static int uid(String account) throws Exception {
        Process p = new ProcessBuilder("id", "-u", account).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertThat(p.waitFor()).as("id -u " + account).isZero();
        return Integer.parseInt(out);
    }

    private static void run(String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as(String.join(" ", cmd) + ": " + out).isZero();
    }
}
