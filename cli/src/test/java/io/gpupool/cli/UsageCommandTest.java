package io.gpupool.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gpupool.server.GpupoolServer;
import io.gpupool.server.ServerOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** gpupool usage against a real server: the table, JSON and CSV of a job's held GPUs, and its errors. */
class UsageCommandTest {
    private static final String ADMIN = "cli-admin-token-0123456789";
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir Path dir;

    @Test
    void usage_prints_what_a_cancelled_job_held_as_a_table_json_and_csv() throws Exception {
        ServerOptions o = ServerOptions.defaults().withHost("127.0.0.1").withPort(0).withDataDir(dir).withAdminToken(ADMIN)
                .withCluster("1x4:T4").withRateLimit(0);
        try (GpupoolServer server = GpupoolServer.start(o, new PrintStream(new ByteArrayOutputStream()))) {
            String url = "http://127.0.0.1:" + server.port();
            server.pool().putTenant("ml", 1, 0, 0, true).join();
            server.pool().putTenant("cv", 1, 0, 0, true).join();
            String id = Cli.run("submit", "--server", url, "--token", ADMIN, "--tenant", "ml", "--gpus", "2", "--user", "ann", "--", "train")
                    .out().split(" ")[1];
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (!Cli.run("status", "--server", url, "--token", ADMIN, "--output", "json", id).out().contains("\"RUNNING\"")) {
                if (System.nanoTime() > deadline) throw new AssertionError(id + " never started");
                Thread.sleep(20);
            }
            assertThat(Cli.run("cancel", "--server", url, "--token", ADMIN, id).exitCode()).isZero();
            JsonNode job = JSON.readTree(Cli.run("status", "--server", url, "--token", ADMIN, "--output", "json", id).out());
            double held = 2 * (job.path("endedMs").asLong() - job.path("startedMs").asLong()) / 1000.0;

            Cli.Result json = Cli.run("usage", "--server", url, "--token", ADMIN, "--since", "1h", "--output", "json");
            assertThat(json.exitCode()).as(json.err()).isZero();
            JsonNode r = JSON.readTree(json.out());
            assertThat(r.path("total").path("gpuSecondsAllocated").asDouble()).isCloseTo(held, within(1e-9));
            assertThat(r.path("total").path("jobs").path("CANCELLED").asInt()).isEqualTo(1);

            Cli.Result table = Cli.run("usage", "--server", url, "--token", ADMIN, "--by", "user");
            assertThat(table.exitCode()).as(table.err()).isZero();
            assertThat(table.out()).contains("by user", "ann", "total", "cancelled:1");

            Cli.Result csv = Cli.run("usage", "--server", url, "--token", ADMIN, "--since", "1h", "--by", "model", "--output", "csv");
            String[] lines = csv.out().strip().split("\n");
            assertThat(lines).hasSize(2);
            assertThat(lines[0]).startsWith("model,gpu_seconds_allocated,");
            String[] cells = lines[1].split(",");
            assertThat(cells[0]).isEqualTo("T4");
            assertThat(Double.parseDouble(cells[1])).isCloseTo(held, within(1e-9));

            Cli.Result bad = Cli.run("usage", "--server", url, "--token", ADMIN, "--by", "week");
            assertThat(bad.exitCode()).isEqualTo(2);
            assertThat(bad.err()).contains("HTTP 400", "by");
            String cv = Cli.run("token", "--server", url, "--token", ADMIN, "cv").out().strip();
            Cli.Result other = Cli.run("usage", "--server", url, "--token", cv, "--tenant", "ml");
            assertThat(other.exitCode()).isEqualTo(2);
            assertThat(other.err()).contains("HTTP 403");
            JsonNode own = JSON.readTree(Cli.run("usage", "--server", url, "--token", cv, "--output", "json").out());
            assertThat(own.path("tenant").asText()).isEqualTo("cv");
            assertThat(own.path("total").path("gpuSecondsAllocated").asDouble()).isZero();
        }
    }
}
