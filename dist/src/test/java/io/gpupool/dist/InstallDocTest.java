package io.gpupool.dist;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * docs/install.md, run as written on one machine standing in for the head node and a GPU server ({@link Lab}), with
 * the release bundle this build made, unpacked away from the source tree, once per store. SQLite: install, TLS, the
 * server's unit, tokens, an agent's unit (fake GPUs), a tenant and a member's job, an upgrade to another bundle with a
 * job running (it keeps running through the server's and the agent's restarts, not relaunched), a backup of the SQLite
 * store and a restore. PostgreSQL (a cluster of the test's own, {@link LabPostgres}): the same start, moved onto
 * PostgreSQL, its backup and restore with a queue, and a second head node (a second {@link Lab}) as a standby that
 * takes over. Every step of the page is on one of the two walks (a step the test does not know fails it, as does a
 * bash block without a marker), and each walk runs its steps in the page's order.
 */
class InstallDocTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern PID = Pattern.compile("pid (\\d+)");
    private static final Pattern SUBMITTED = Pattern.compile("submitted (j\\d+)");

    /** The steps of the SQLite walk, in the page's order. */
    private static final List<String> SQLITE_WALK = List.of("install", "tls", "server", "admin", "join-token", "agent", "nodes", "tenants",
            "first-job", "upgrade-server", "upgrade-agent", "backup", "restore");
    /** The steps of the PostgreSQL walk, in the page's order (install again on the second head node, as section 11 says). */
    private static final List<String> POSTGRESQL_WALK = List.of("install", "tls", "server", "postgresql", "admin", "join-token", "agent",
            "nodes", "tenants", "first-job", "pg-backup", "pg-restore", "ha-active", "ha-certificate", "install", "ha-standby", "ha-clients");

    @Test
    void everyStepOfThePageIsOnAWalkInThePagesOrder() throws Exception {
        List<String> steps = List.copyOf(InstallDoc.read(Bundles.repoRoot().resolve("docs/install.md")).steps().keySet());
        Set<String> both = new LinkedHashSet<>(SQLITE_WALK);
        both.addAll(POSTGRESQL_WALK);
        assertThat(both).as("the two walks together run every step of docs/install.md").containsExactlyInAnyOrderElementsOf(steps);
        for (List<String> walk : List.of(SQLITE_WALK, POSTGRESQL_WALK))
            assertThat(walk.stream().distinct().toList()).as("a walk follows the page's order (a step run again aside)")
                    .isSortedAccordingTo(Comparator.comparingInt(steps::indexOf));
    }

    @TempDir Path tmp;

    @Test
    @Timeout(600)  // about 2 to 3 minutes on two cores shared with other builds (load 15); most of it JVM starts
    void theInstallPageBuildsAWorkingPoolAndKeepsItThroughAnUpgradeAndARestore() throws Exception {
        Bundles.needTool(onPath("curl") && onPath("openssl"), "curl or openssl is not installed: docs/install.md was not run (apt-get install curl openssl)");
        InstallDoc doc = InstallDoc.read(Bundles.repoRoot().resolve("docs/install.md"));
        Set<String> run = new LinkedHashSet<>();
        Path labRoot = Files.createDirectory(tmp.resolve("lab"));
        try (Lab lab = new Lab(labRoot)) {
            Bundles.placeBundles(lab.home, doc);

            step(lab, doc, run, "install");
            assertThat(lab.root.resolve("opt/gpupool").toRealPath().getFileName().toString()).isEqualTo(Bundles.name());
            step(lab, doc, run, "tls");
            Lab.Result server = step(lab, doc, run, "server");
            assertThat(server.stdout()).contains("\"status\":\"ready\"");
            assertThat(lab.journal("gpupool-server")).contains("listening on https://");
            // bin/gpupool runs the service with the repository launcher's JVM options (lib/java-options.sh) on JDK 25
            assertThat(commandLine(lab, "gpupool-server")).contains("-XX:MaxGCPauseMillis=20", "--sun-misc-unsafe-memory-access=allow")
                    .anyMatch(a -> a.matches(".*/bin/java")).containsSequence("-jar", lab.root + "/opt/" + Bundles.name() + "/lib/gpupool.jar", "server");
            step(lab, doc, run, "admin");
            Lab.Result token = step(lab, doc, run, "join-token");
            assertThat(token.stdout().trim()).startsWith("gp_");
            step(lab, doc, run, "agent");
            Lab.Result nodes = step(lab, doc, run, "nodes");
            assertThat(nodes.stdout()).contains("A100-80GB");
            if (System.getenv("GPUPOOL_CI") != null) {
                // CI builds the bundle with a C compiler: its agent runs jobs in the native wrapper, installed from the jar
                assertThat(lab.journal("gpupool-agent")).contains("in the native wrapper");
            }

            step(lab, doc, run, "tenants");
            Lab.Result first = step(lab, doc, run, "first-job");
            assertThat(first.stdout()).contains("submitted j1").contains("hello from GPU-").containsPattern("j1\\s+SUCCEEDED\\s+tenant vision");

            // a job that runs until the test lets it end, through the upgrade's restarts
            Path go = lab.root.resolve("go");
            lab.run("long job", "GPUPOOL_TOKEN=$MEMBER gpupool submit --gpus 1 --name long -- sh -c 'while [ ! -e " + go
                    + " ]; do sleep 0.1; done; echo finished'\n").orFail("submitting the long job");
            JsonNode running = awaitState(lab, "j2", "RUNNING");
            long pid = runningPid(lab, "j2");
            assertThat(ProcessHandle.of(pid)).as("j2's process").isPresent();

            step(lab, doc, run, "upgrade-server");
            step(lab, doc, run, "upgrade-agent");
            assertThat(lab.root.resolve("opt/gpupool").toRealPath().getFileName().toString()).isEqualTo("gpupool-0.2.0");
            assertThat(commandLine(lab, "gpupool-server")).contains(lab.root + "/opt/gpupool-0.2.0/lib/gpupool.jar");
            assertThat(commandLine(lab, "gpupool-agent")).contains(lab.root + "/opt/gpupool-0.2.0/lib/gpupool.jar");
            assertThat(lab.journal("gpupool-server")).contains("1 active jobs restored");
            assertThat(job(lab, "j2").path("state").asText()).isEqualTo("RUNNING");
            assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive)).as("j2's process after both restarts").contains(true);
            Files.createFile(go);
            awaitState(lab, "j2", "SUCCEEDED");
            assertThat(events(lab, "j2")).as("j2 started once, never relaunched").filteredOn(t -> t.equals("STARTED")).hasSize(1);
            assertThat(lab.run("logs", "GPUPOOL_TOKEN=$MEMBER gpupool logs j2\n").orFail("logs j2").stdout()).isEqualTo("finished\n");
            assertThat(running.path("state").asText()).isEqualTo("RUNNING");

            Bundles.needTool(onPath("sqlite3"), "sqlite3 is not installed: the page's SQLite backup and restore were not run (apt-get install sqlite3)");
            step(lab, doc, run, "backup");
            // a job after the backup, which the restored store does not know: it runs on the agent, which keeps its attempt
            // directory, and the restored server, numbering jobs from the backup's last, gives its id to the next job
            lab.run("after backup", "GPUPOOL_TOKEN=$MEMBER gpupool submit --gpus 1 --name later -- sh -c 'echo later; exit 3'\n")
                    .orFail("submitting j3");
            awaitState(lab, "j3", "FAILED");
            step(lab, doc, run, "restore");
            Lab.Result gone = lab.run("GET j3", "curl -sS -o /dev/null -w '%{http_code}' --cacert $GPUPOOL_CA -H \"Authorization: Bearer $GPUPOOL_TOKEN\" "
                    + "$GPUPOOL_SERVER/api/v1/jobs/j3\n").orFail("GET j3");
            assertThat(gone.stdout()).as("j3 after the restore").isEqualTo("404");
            assertThat(job(lab, "j2").path("state").asText()).isEqualTo("SUCCEEDED");
            // the restored pool runs new work, also a job given j3's id again on the agent that ran the old j3 (the page says so)
            Lab.Result again = lab.run("after restore", "GPUPOOL_TOKEN=$MEMBER gpupool submit --gpus 1 --name again -- echo again\n")
                    .orFail("submitting after the restore");
            Matcher id = Pattern.compile("submitted (j\\d+)").matcher(again.stdout());
            assertThat(id.find()).as(again.stdout()).isTrue();
            assertThat(id.group(1)).as("the restored store gives out j3 again").isEqualTo("j3");
            JsonNode reused = awaitState(lab, "j3", "SUCCEEDED");
            assertThat(reused.path("exitCode").asInt()).as("the new j3's exit code, not the old one's").isZero();
            assertThat(lab.run("logs j3", "GPUPOOL_TOKEN=$MEMBER gpupool logs j3\n").orFail("logs j3").stdout()).isEqualTo("again\n");

            assertThat(run).as("the SQLite walk's steps are run").containsExactlyElementsOf(SQLITE_WALK);
        }
    }

    @Test
    @Timeout(600)  // 2.5 to 3.5 minutes on two cores shared with other builds (load 8): five server starts, two agent starts
    void thePostgresqlWalkMovesTheServerOntoPostgresqlRestoresItsQueueAndAddsAStandbyThatTakesOver() throws Exception {
        Bundles.needTool(onPath("curl") && onPath("openssl"), "curl or openssl is not installed: docs/install.md was not run (apt-get install curl openssl)");
        Path bin = LabPostgres.binaries();
        Bundles.needTool(bin != null, "PostgreSQL is not installed (no /usr/lib/postgresql/N/bin/initdb): docs/install.md's PostgreSQL steps "
                + "were not run (apt-get install postgresql)");
        InstallDoc doc = InstallDoc.read(Bundles.repoRoot().resolve("docs/install.md"));
        List<String> run = new ArrayList<>();
        Lab.Net net = Lab.Net.fresh();
        try (LabPostgres db = new LabPostgres(bin, tmp.resolve("postgresql"));
             Lab lab = new Lab(Files.createDirectory(tmp.resolve("lab")), net, Lab.HEAD, db);
             Lab lab2 = new Lab(Files.createDirectory(tmp.resolve("lab-2")), net, Lab.HEAD_2, db)) {
            try {
                walkPostgresql(doc, run, db, lab, lab2);
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + "\n--- " + Lab.HEAD_2 + " (port " + lab2.port + "), server journal\n" + lab2.journal("gpupool-server")
                        + "--- " + Lab.HEAD + " (port " + lab.port + "), server journal\n" + lab.journal("gpupool-server")
                        + "--- agent journal\n" + lab.journal("gpupool-agent") + "--- PostgreSQL's log\n" + db.log(), e);
            }
        }
    }

    private static void walkPostgresql(InstallDoc doc, List<String> run, LabPostgres db, Lab lab, Lab lab2) throws Exception {
        Bundles.placeBundle(lab.home, doc);
        step(lab, doc, run, "install");
        step(lab, doc, run, "tls");
        assertThat(step(lab, doc, run, "server").stdout()).contains("\"store\":\"sqlite\"");
        // a tenant in the SQLite store: the page says the move to PostgreSQL does not copy it
        lab.run("tenant in SQLite", "curl -fsS --cacert /etc/gpupool/tls/ca.crt -H \"Authorization: Bearer $(sed -n 's/^GPUPOOL_ADMIN_TOKEN=//p' "
                + "/etc/gpupool/server.env)\" -H 'Content-Type: application/json' -X POST https://gpupool.example.com:8080/api/v1/tenants "
                + "-d '{\"name\":\"left-in-sqlite\",\"weight\":1}'\n").orFail("a tenant in the SQLite store");

        Lab.Result moved = step(lab, doc, run, "postgresql");
        assertThat(moved.stdout()).contains("\"status\":\"ready\"", "\"store\":\"postgresql\"");
        String password = lab.run("the password", "echo \"$DB_PASSWORD\"\n").orFail("DB_PASSWORD").stdout().trim();
        assertThat(password).matches("[0-9a-f]{48}");
        assertThat(lab.journal("gpupool-server")).as("the server's journal names the store, not its password")
                .contains("store: jdbc:postgresql://127.0.0.1:" + db.port + "/gpupool").doesNotContain(password);
        // the server logs in with the password (scram-sha-256 on 127.0.0.1): one that is wrong is refused
        Lab.Result wrong = lab.run("a wrong password", "PGPASSWORD=not-it psql -h 127.0.0.1 -U gpupool -c 'SELECT 1' gpupool\n");
        assertThat(wrong.exitCode()).as(wrong.stderr()).isNotZero();
        assertThat(wrong.stderr()).contains("password authentication failed");

        step(lab, doc, run, "admin");   // the admin token of server.env, stored again in PostgreSQL
        assertThat(api(lab, lab.url(), "/api/v1/tenants").toString()).as("tenants on PostgreSQL").doesNotContain("left-in-sqlite");
        assertThat(lab.root.resolve("var/lib/gpupool/gpupool.db")).as("the SQLite store stays where it was").isRegularFile();
        step(lab, doc, run, "join-token");
        step(lab, doc, run, "agent");
        assertThat(step(lab, doc, run, "nodes").stdout()).contains("A100-80GB");
        step(lab, doc, run, "tenants");
        assertThat(step(lab, doc, run, "first-job").stdout()).contains("submitted j1").contains("hello from GPU-")
                .containsPattern("j1\\s+SUCCEEDED\\s+tenant vision");

        // the queue the backup holds: a job that runs until the test lets it end, and one that waits for it
        Path go = lab.root.resolve("go");
        String longJob = submit(lab, "--name long -- sh -c 'while [ ! -e " + go + " ]; do sleep 0.1; done; echo finished'");
        awaitState(lab, lab.url(), longJob, "RUNNING");
        long pid = runningPid(lab, longJob);
        String waiting = submit(lab, "--name waits --dependency afterok:" + longJob + " -- echo after");
        assertThat(job(lab, lab.url(), waiting).path("state").asText()).isEqualTo("PENDING");
        step(lab, doc, run, "pg-backup");
        String later = submit(lab, "--name later -- echo later");
        awaitState(lab, lab.url(), later, "SUCCEEDED");
        step(lab, doc, run, "pg-restore");
        Lab.Result gone = lab.run("GET " + later, "curl -sS -o /dev/null -w '%{http_code}' --cacert $GPUPOOL_CA -H \"Authorization: Bearer $GPUPOOL_TOKEN\" "
                + lab.url() + "/api/v1/jobs/" + later + "\n").orFail("GET " + later);
        assertThat(gone.stdout()).as(later + ", submitted after the backup, after the restore").isEqualTo("404");
        assertThat(job(lab, lab.url(), waiting).path("state").asText()).as("the waiting job after the restore").isEqualTo("PENDING");
        assertThat(job(lab, lab.url(), longJob).path("state").asText()).as("the running job after the restore").isEqualTo("RUNNING");
        assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive)).as(longJob + "'s process after the restore").contains(true);
        Files.createFile(go);
        awaitState(lab, lab.url(), longJob, "SUCCEEDED");
        awaitState(lab, lab.url(), waiting, "SUCCEEDED");
        assertThat(events(lab, lab.url(), longJob)).as(longJob + " started once").filteredOn(t -> t.equals("STARTED")).hasSize(1);
        assertThat(lab.run("logs", "GPUPOOL_TOKEN=$MEMBER gpupool logs " + waiting + "\n").orFail("logs").stdout()).isEqualTo("after\n");

        step(lab, doc, run, "ha-active");
        step(lab, doc, run, "ha-certificate");
        // what the page copies to the second head node, and the bundle (section 2)
        for (String f : List.of("ca.crt", "server-2.crt", "server-2.key")) Files.copy(lab.home.resolve(f), lab2.home.resolve(f));
        Files.copy(lab.root.resolve("etc/gpupool/server.env"), lab2.home.resolve("server.env"));
        Bundles.placeBundle(lab2.home, doc);
        step(lab2, doc, run, "install");
        Lab.Result standby = step(lab2, doc, run, "ha-standby");
        JsonNode health = JSON.readTree(standby.stdout().lines().reduce((a, b) -> b).orElseThrow());
        assertThat(health.path("role").asText()).as(health.toString()).isEqualTo("standby");
        assertThat(health.path("self").asText()).isEqualTo(lab2.url());
        assertThat(health.path("active").asText()).isEqualTo(lab.url());
        assertThat(JSON.readTree(get(lab, lab.url() + "/healthz")).path("role").asText()).isEqualTo("active");

        assertThat(step(lab, doc, run, "ha-clients").stdout()).contains("A100-80GB");
        String onActive = submit(lab, "--name on-first -- echo first");
        assertThat(awaitState(lab, lab.url(), onActive, "SUCCEEDED").path("exitCode").asInt()).isZero();
        // the active head node's server dies: the standby takes over, and the agent and the clients follow it
        lab.run("stop the active", "systemctl stop gpupool-server\n").orFail("stopping the first head node's server");
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (!roleThroughTakeover(lab, lab2.url()).equals("active")) {
            if (System.nanoTime() > deadline) throw new AssertionError("the standby did not take over in 60 s\n--- its journal\n" + lab2.journal("gpupool-server"));
            Thread.sleep(200);
        }
        String onSecond = submit(lab, "--name on-second -- echo second");
        assertThat(awaitState(lab, lab2.url(), onSecond, "SUCCEEDED").path("exitCode").asInt()).isZero();
        assertThat(lab.run("logs", "GPUPOOL_TOKEN=$MEMBER gpupool logs " + onSecond + "\n").orFail("logs").stdout()).isEqualTo("second\n");

        assertThat(run).as("the PostgreSQL walk's steps are run").containsExactlyElementsOf(POSTGRESQL_WALK);
    }

    /** A member's job of one GPU, through the CLI (which follows the active head node); returns its id. */
    private static String submit(Lab lab, String args) throws Exception {
        Lab.Result r = lab.run("submit", "GPUPOOL_TOKEN=$MEMBER gpupool submit --gpus 1 " + args + "\n").orFail("submitting " + args);
        Matcher m = SUBMITTED.matcher(r.stdout());
        assertThat(m.find()).as(r.stdout()).isTrue();
        return m.group(1);
    }

    /**
     * A replica's role, polled through its takeover: "" when curl's connection was reset (exit 35 in the TLS handshake,
     * 56 after it). That is what happens to a connection the kernel had queued for the standby's listener, not yet
     * accepted, when it closes (docs/install.md, section 11). Any other failure fails, "empty reply from server" (52)
     * above all: a request the standby took in must be answered (StandbyServerTest).
     */
    private static String roleThroughTakeover(Lab lab, String url) throws Exception {
        Lab.Result r = curl(lab, url + "/healthz");
        if (r.exitCode() == 35 || r.exitCode() == 56) return "";
        return JSON.readTree(r.orFail("GET " + url + "/healthz").stdout()).path("role").asText();
    }

    private static String get(Lab lab, String url) throws Exception {
        return curl(lab, url).orFail("GET " + url).stdout();
    }

    /** GET {@code url} with the lab's CA, as the page's commands do; failures are the caller's to read. */
    private static Lab.Result curl(Lab lab, String url) throws Exception {
        return lab.run("GET " + url, "curl -fsS --cacert $GPUPOOL_CA " + url + "\n");
    }

    private static Lab.Result step(Lab lab, InstallDoc doc, Collection<String> run, String name) throws Exception {
        run.add(name);
        try {
            return lab.run("step " + name, doc.step(name)).orFail("docs/install.md step '" + name + "'");
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "\n--- server journal\n" + lab.journal("gpupool-server")
                    + "--- agent journal\n" + lab.journal("gpupool-agent"), e);
        }
    }

    /** The arguments of a unit's main process (the JVM that bin/gpupool became). */
    private static List<String> commandLine(Lab lab, String unit) throws Exception {
        String pid = Files.readString(lab.root.resolve("run/" + unit + ".pid")).trim();
        return List.of(Files.readString(Path.of("/proc", pid, "cmdline")).split("\0"));
    }

    private static JsonNode job(Lab lab, String id) throws Exception {
        return job(lab, "$GPUPOOL_SERVER", id);
    }

    private static JsonNode job(Lab lab, String server, String id) throws Exception {
        return api(lab, server, "/api/v1/jobs/" + id);
    }

    /** GET as the admin from {@code server} (curl: polling through the JVM-started CLI would take a second a call). */
    private static JsonNode api(Lab lab, String server, String path) throws Exception {
        return JSON.readTree(lab.run("GET " + path, "curl -fsS --cacert $GPUPOOL_CA -H \"Authorization: Bearer $GPUPOOL_TOKEN\" " + server
                + path + "\n").orFail("GET " + path).stdout());
    }

    private static List<String> events(Lab lab, String id) throws Exception {
        return events(lab, "$GPUPOOL_SERVER", id);
    }

    private static List<String> events(Lab lab, String server, String id) throws Exception {
        JsonNode e = api(lab, server, "/api/v1/jobs/" + id + "/events");
        List<String> types = new ArrayList<>();
        e.path("events").forEach(x -> types.add(x.path("type").asText()));
        return types;
    }

    private static long runningPid(Lab lab, String id) throws Exception {
        JsonNode e = api(lab, "$GPUPOOL_SERVER", "/api/v1/jobs/" + id + "/events");
        for (JsonNode x : e.path("events")) {
            Matcher m = PID.matcher(x.path("detail").asText());
            if (x.path("type").asText().equals("RUNNING") && m.find()) return Long.parseLong(m.group(1));
        }
        throw new AssertionError(id + " has no RUNNING event with a pid: " + e);
    }

    /** Polls the job until it reaches the state (or a final one: then the test fails with the job as it is). */
    private static JsonNode awaitState(Lab lab, String id, String state) throws Exception {
        return awaitState(lab, "$GPUPOOL_SERVER", id, state);
    }

    private static JsonNode awaitState(Lab lab, String server, String id, String state) throws Exception {
        long deadline = System.nanoTime() + 60_000_000_000L;
        JsonNode j = job(lab, server, id);
        while (!j.path("state").asText().equals(state)) {
            String now = j.path("state").asText();
            if (Set.of("SUCCEEDED", "FAILED", "CANCELLED").contains(now) || System.nanoTime() > deadline)
                throw new AssertionError(id + " is " + now + ", waited for " + state + ": " + j + "\n--- agent journal\n" + lab.journal("gpupool-agent"));
            Thread.sleep(200);
            j = job(lab, server, id);
        }
        return j;
    }

    private static boolean onPath(String command) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(":"))
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, command))) return true;
        return false;
    }
}
