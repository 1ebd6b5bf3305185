package io.gpupool.cli;

import io.gpupool.server.GpupoolServer;
import io.gpupool.server.ServerOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** reservation create / list / delete, submit --reservation, update --time on an array, and simulate --reservations. */
class ReservationCommandsTest {
    private static final String ADMIN = "cli-admin-token-0123456789";

    @TempDir Path dir;

    @Test
    void reservations_from_the_command_line() {
        ServerOptions o = ServerOptions.defaults().withHost("127.0.0.1").withPort(0).withDataDir(dir).withAdminToken(ADMIN)
                .withCluster("2x4:T4").withRateLimit(0).withPolicy("fcfs");
        try (GpupoolServer server = GpupoolServer.start(o, new PrintStream(new ByteArrayOutputStream()))) {
            String url = "http://127.0.0.1:" + server.port();
            server.pool().putTenant("ml", 1, 0, 0, true).join();
            String[] c = {"--server", url, "--token", ADMIN};

            Cli.Result made = Cli.run(Cli.cat(new String[] {"reservation", "create"}, c, "--tenant", "ml", "--gpus", "4", "--model", "t4",
                    "--start", "+1h", "--end", "+2h"));
            assertThat(made.exitCode()).as(made.err()).isZero();
            assertThat(made.out()).startsWith("reserved ml-1: 4 GPUs for tenant ml from ");
            Cli.Result tooMany = Cli.run(Cli.cat(new String[] {"reservation", "create"}, c, "--tenant", "ml", "--gpus", "5", "--model", "T4",
                    "--start", "+90m", "--end", "+3h"));
            assertThat(tooMany.exitCode()).isEqualTo(2);
            assertThat(tooMany.err()).contains("HTTP 422", "gpus", "ml-1");
            Cli.Result neither = Cli.run(Cli.cat(new String[] {"reservation", "create"}, c, "--tenant", "ml", "--start", "now", "--end", "+1h"));
            assertThat(neither.exitCode()).isEqualTo(2);
            assertThat(Cli.run(Cli.cat(new String[] {"reservation", "list"}, c)).out()).contains("ml-1", "ml", "T4");

            Cli.Result in = Cli.run(Cli.cat(new String[] {"submit"}, c, "--tenant", "ml", "--reservation", "ml-1", "--gpus", "2", "--", "x"));
            assertThat(in.exitCode()).as(in.err()).isZero();
            Cli.Result unknown = Cli.run(Cli.cat(new String[] {"submit"}, c, "--tenant", "ml", "--reservation", "nope", "--", "x"));
            assertThat(unknown.err()).contains("HTTP 422", "reservation", "no reservation named 'nope'");

            Cli.Result array = Cli.run(Cli.cat(new String[] {"submit"}, c, "--tenant", "ml", "--array", "0-5", "--gpus", "4", "--", "x"));
            String id = array.out().split(" ")[2];
            Cli.Result upd = Cli.until(() -> Cli.run(Cli.cat(new String[] {"update"}, c, id, "--time", "30")), r -> r.out().contains(": 5 tasks updated"));
            assertThat(upd.out()).as(upd.err()).contains(id + ": 5 tasks updated");

            assertThat(Cli.run(Cli.cat(new String[] {"reservation", "delete"}, c, "ml-1")).out()).contains("deleted reservation ml-1");
            assertThat(Cli.run(Cli.cat(new String[] {"reservation", "delete"}, c, "ml-1")).err()).contains("HTTP 404");
        }
    }

    @Test
    void simulate_with_a_reservations_file() throws Exception {
        Path trace = dir.resolve("t.csv");
        Files.writeString(trace, "job_id,submit_time,duration,num_gpus,tenant,time_limit\na,0,50,4,x,60\nb,10,50,4,x,\nc,20,30,4,y,\n");
        Path res = dir.resolve("r.csv");
        Files.writeString(res, "tenant,gpus,model,start,end\ny,4,A100-80GB,100,200\n");
        Cli.Result r = Cli.run("simulate", "--trace", trace.toString(), "--cluster", "1x4:A100-80GB", "--policy", "fcfs", "--output", "json",
                "--reservations", res.toString(), "-q");
        assertThat(r.exitCode()).as(r.err()).isZero();
        // a runs 0..50 (its limit ends before 100); b has no limit: after the window, 200..250; c is y's: 100..130
        assertThat(r.out()).contains("\"makespan_s\" : 250.0");
        Files.writeString(res, "tenant,gpus,model,start,end\ny,5,A100-80GB,100,200\n");
        Cli.Result bad = Cli.run("simulate", "--trace", trace.toString(), "--cluster", "1x4:A100-80GB", "--policy", "fcfs", "--reservations", res.toString(), "-q");
        assertThat(bad.exitCode()).isEqualTo(2);
        assertThat(bad.err()).contains(res + ":2: field 'gpus': the pool has only 4 GPUs of model A100-80GB");
    }
}
