package io.gpupool.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gpupool.server.GpupoolServer;
import io.gpupool.server.ServerOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * gpupool history export and simulate --history against a real server (jobs on a node without an agent run until
 * cancelled): the CSV and pool files, the comparison with the record first from the URL and from the files (the same
 * figures), and the errors.
 */
class HistoryCommandsTest {
    private static final String ADMIN = "cli-admin-token-0123456789";
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir Path dir;

    @Test
    void export_then_compare_policies_on_the_history_from_the_server_and_from_the_files() throws Exception {
        ServerOptions o = ServerOptions.defaults().withHost("127.0.0.1").withPort(0).withDataDir(dir.resolve("data")).withAdminToken(ADMIN)
                .withCluster("1x4:T4").withRateLimit(0).withPolicy("fcfs");
        try (GpupoolServer server = GpupoolServer.start(o, new PrintStream(new ByteArrayOutputStream()))) {
            String url = "http://127.0.0.1:" + server.port();
            server.pool().putTenant("ml", 1, 0, 0, true).join();
            List<String> ids = new ArrayList<>();
            for (String gpus : List.of("2", "2", "4")) {
                ids.add(Cli.run("submit", "--server", url, "--token", ADMIN, "--tenant", "ml", "--gpus", gpus, "--", "train").out().split(" ")[1]);
            }
            for (String id : ids) {
                long deadline = System.nanoTime() + 10_000_000_000L;
                while (!Cli.run("status", "--server", url, "--token", ADMIN, "--output", "json", id).out().contains("\"RUNNING\"")) {
                    if (System.nanoTime() > deadline) throw new AssertionError(id + " never started");
                    Thread.sleep(20);
                }
                assertThat(Cli.run("cancel", "--server", url, "--token", ADMIN, id).exitCode()).isZero();
            }

            Path csv = dir.resolve("history.csv");
            Path pool = dir.resolve("pool.json");
            Cli.Result export = Cli.run("history", "export", "--server", url, "--token", ADMIN, "--since", "1h", "--output", csv.toString(), "--pool", pool.toString());
            assertThat(export.exitCode()).as(export.err()).isZero();
            assertThat(export.err()).contains("3 finished jobs", "left out: 0 still queued or running");
            List<String> lines = Files.readAllLines(csv);
            assertThat(lines).hasSize(4);
            assertThat(lines.get(0)).startsWith("job_id,submit_time,duration,num_gpus,").endsWith(",recorded_runs");
            assertThat(lines.get(3)).startsWith(ids.get(2) + ",").contains(",CANCELLED,").endsWith("@t4-0000:0+1+2+3");
            JsonNode poolFile = JSON.readTree(Files.readString(pool));
            assertThat(poolFile.path("policy").asText()).isEqualTo("fcfs");
            assertThat(poolFile.path("nodes").findValuesAsText("name")).containsExactly("t4-0000");
            // without --output the CSV goes to stdout, the same
            assertThat(Cli.run("history", "export", "--server", url, "--token", ADMIN, "--since", "1h", "-q").out()).isEqualTo(Files.readString(csv));

            Cli.Result table = Cli.run("simulate", "--history", url, "--token", ADMIN, "--since", "1h", "--policy", "fcfs,las", "-q");
            assertThat(table.exitCode()).as(table.err()).isZero();
            String[] rows = table.out().split("\n");
            assertThat(rows[3]).startsWith("recorded (fcfs)");
            assertThat(rows[4]).startsWith("fcfs ");
            assertThat(rows[5]).startsWith("las ");

            JsonNode fromServer = JSON.readTree(Cli.run("simulate", "--history", url, "--token", ADMIN, "--since", "1h", "--policy", "fcfs", "--output", "json", "-q").out());
            Cli.Result files = Cli.run("simulate", "--history", csv.toString(), "--pool", pool.toString(), "--policy", "fcfs", "--output", "json", "-q");
            assertThat(files.exitCode()).as(files.err()).isZero();
            JsonNode fromFiles = JSON.readTree(files.out());
            assertThat(fromFiles.get(0).path("policy").asText()).isEqualTo("recorded (fcfs)");
            assertThat(fromFiles.get(0).path("jobs").asInt()).isEqualTo(3);
            for (int i = 0; i < 2; i++) {
                ((com.fasterxml.jackson.databind.node.ObjectNode) fromServer.get(i)).remove("trace");
                ((com.fasterxml.jackson.databind.node.ObjectNode) fromFiles.get(i)).remove("trace");
            }
            assertThat(fromFiles).isEqualTo(fromServer);

            Cli.Result badSince = Cli.run("history", "export", "--server", url, "--token", ADMIN, "--since", "last week");
            assertThat(badSince.exitCode()).isEqualTo(2);
            assertThat(badSince.err()).contains("HTTP 400", "must be epoch milliseconds, an ISO-8601 instant", "last week");
            Cli.Result badPolicy = Cli.run("simulate", "--history", url, "--token", ADMIN, "--policy", "fifo");
            assertThat(badPolicy.exitCode()).isEqualTo(2);
            assertThat(badPolicy.err()).contains("unknown policy 'fifo'");
            Cli.Result noPool = Cli.run("simulate", "--history", csv.toString());
            assertThat(noPool.exitCode()).isEqualTo(2);
            assertThat(noPool.err()).contains("a pool is needed");
            Cli.Result otherNodes = Cli.run("simulate", "--history", csv.toString(), "--cluster", "1x4:L4");
            assertThat(otherNodes.exitCode()).isEqualTo(2);
            assertThat(otherNodes.err()).contains("t4-0000", "which this pool does not have");
            Cli.Result both = Cli.run("simulate", "--history", url, "--token", ADMIN, "--cluster", "1x4:T4");
            assertThat(both.exitCode()).isEqualTo(2);
            Path plain = dir.resolve("plain.csv");
            Files.writeString(plain, "job_id,submit_time,duration,num_gpus\na,0,10,1\n");
            Cli.Result notHistory = Cli.run("simulate", "--history", plain.toString(), "--pool", pool.toString());
            assertThat(notHistory.exitCode()).isEqualTo(2);
            assertThat(notHistory.err()).contains(plain + ":1: field 'recorded_state': required column missing");
        }
    }
}
