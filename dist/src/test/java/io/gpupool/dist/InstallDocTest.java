package io.gpupool.dist;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * docs/install.md, run as written on one machine standing in for the head node and a GPU server ({@link Lab}), with
 * the release bundle this build made, unpacked away from the source tree: install, TLS, the server's unit, tokens, an
 * agent's unit (fake GPUs), a tenant and a member's job, an upgrade to another bundle with a job running (it keeps
 * running through the server's and the agent's restarts, not relaunched), a backup of the SQLite store and a restore.
 * Every step of the page is run: a step the test does not know fails it, as does a bash block without a marker.
 */
class InstallDocTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern PID = Pattern.compile("pid (\\d+)");

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

            assertThat(run).as("every step of docs/install.md is run").containsExactlyElementsOf(doc.steps().keySet());
        }
    }

    private static Lab.Result step(Lab lab, InstallDoc doc, Set<String> run, String name) throws Exception {
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
        return api(lab, "/api/v1/jobs/" + id);
    }

    /** GET as the admin (curl: polling through the JVM-started CLI would take a second a call). */
    private static JsonNode api(Lab lab, String path) throws Exception {
        return JSON.readTree(lab.run("GET " + path, "curl -fsS --cacert $GPUPOOL_CA -H \"Authorization: Bearer $GPUPOOL_TOKEN\" $GPUPOOL_SERVER"
                + path + "\n").orFail("GET " + path).stdout());
    }

    private static List<String> events(Lab lab, String id) throws Exception {
        JsonNode e = api(lab, "/api/v1/jobs/" + id + "/events");
        List<String> types = new ArrayList<>();
        e.path("events").forEach(x -> types.add(x.path("type").asText()));
        return types;
    }

    private static long runningPid(Lab lab, String id) throws Exception {
        JsonNode e = api(lab, "/api/v1/jobs/" + id + "/events");
        for (JsonNode x : e.path("events")) {
            Matcher m = PID.matcher(x.path("detail").asText());
            if (x.path("type").asText().equals("RUNNING") && m.find()) return Long.parseLong(m.group(1));
        }
        throw new AssertionError(id + " has no RUNNING event with a pid: " + e);
    }

    /** Polls the job until it reaches the state (or a final one: then the test fails with the job as it is). */
    private static JsonNode awaitState(Lab lab, String id, String state) throws Exception {
        long deadline = System.nanoTime() + 60_000_000_000L;
        JsonNode j = job(lab, id);
        while (!j.path("state").asText().equals(state)) {
            String now = j.path("state").asText();
            if (Set.of("SUCCEEDED", "FAILED", "CANCELLED").contains(now) || System.nanoTime() > deadline)
                throw new AssertionError(id + " is " + now + ", waited for " + state + ": " + j + "\n--- agent journal\n" + lab.journal("gpupool-agent"));
            Thread.sleep(200);
            j = job(lab, id);
        }
        return j;
    }

    private static boolean onPath(String command) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(":"))
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, command))) return true;
        return false;
    }
}
