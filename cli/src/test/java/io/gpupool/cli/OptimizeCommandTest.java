package io.gpupool.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

class OptimizeCommandTest {
    @TempDir Path dir;

    private Path jobs(String csv) throws Exception {
        Path f = dir.resolve("jobs.csv");
        Files.writeString(f, csv);
        return f;
    }

    /** 4 + 4 + 8 GPUs asked of one 8-GPU node: any two of the 4s, or the 8; priorities make the 8 worth most. */
    private static final String BATCH = """
            job_id,submit_time,duration,num_gpus,priority
            a,0,60,4,0
            b,0,60,4,0
            big,0,60,8,1
            never,0,60,16,0
            """;

    @Test
    void jsonHasTheContractFieldsAndTheOptimalAnswer() throws Exception {
        Cli.Result r = Cli.run("optimize", "--cluster", "1x8:A100-80GB", "--jobs", jobs(BATCH).toString(), "--solver", "cpsat", "--output", "json");
        assertThat(r.exitCode()).as(r.err()).isZero();
        JsonNode o = new ObjectMapper().readTree(r.out());
        assertThat(o.fieldNames()).toIterable().contains("solver", "objective", "bound", "optimal", "placed_jobs", "seconds");
        assertThat(o.get("solver").asText()).isEqualTo("cpsat");
        assertThat(o.get("objective").asDouble()).isEqualTo(16.0);   // weight 2 x 8 GPUs beats 1 x (4 + 4)
        assertThat(o.get("bound").asDouble()).isEqualTo(16.0);
        assertThat(o.get("optimal").asBoolean()).isTrue();
        assertThat(o.get("placed_jobs").asInt()).isEqualTo(1);
        assertThat(o.get("placement").get(0).get("job_id").asText()).isEqualTo("big");
        assertThat(o.get("rejected").fieldNames()).toIterable().containsExactly("never");
    }

    @Test
    void tableShowsThePlacementObjectiveGapAndTime() throws Exception {
        for (String solver : new String[] {"greedy", "ga", "aco", "pso", "cpsat"}) {
            Cli.Result r = Cli.run("optimize", "--cluster", "1x8:A100-80GB", "--jobs", jobs(BATCH).toString(), "--solver", solver, "--seconds", "5");
            assertThat(r.exitCode()).as(solver + ": " + r.err()).isZero();
            assertThat(r.out()).as(solver).contains("big", "a100-80gb-0000", "0,1,2,3,4,5,6,7", "objective  16 weighted GPUs", "gap 0.00%", "time ");
            assertThat(r.out()).as(solver).containsPattern("cannot run on this cluster: .*\\bnever\\b");
        }
    }

    @Test
    void badInputIsAClearErrorWithExitCode2() throws Exception {
        Cli.Result unknown = Cli.run("optimize", "--cluster", "1x8:A100-80GB", "--jobs", jobs(BATCH).toString(), "--solver", "annealing");
        Cli.assertRefused(unknown, "solver");
        Cli.Result malformed = Cli.run("optimize", "--cluster", "1x8:A100-80GB", "--jobs", jobs("job_id,submit_time,duration,num_gpus\nx,0,60,two\n").toString());
        Cli.assertRefused(malformed, "num_gpus");
        assertThat(malformed.err()).contains("jobs.csv:2");
        Cli.Result none = Cli.run("optimize", "--cluster", "1x8:A100-80GB", "--jobs", jobs("job_id,submit_time,duration,num_gpus\nx,0,60,64\n").toString());
        Cli.assertRefused(none, "jobs");
        Cli.Result missing = Cli.run("optimize", "--cluster", "1x8:A100-80GB", "--jobs", dir.resolve("nope.csv").toString());
        Cli.assertRefused(missing, "jobs");
        assertThat(missing.err()).contains("nope.csv");
    }

    @Test
    void aSpentBudgetIsReported() throws Exception {
        StringBuilder csv = new StringBuilder("job_id,submit_time,duration,num_gpus,gpu_milli,priority\n");
        for (int i = 0; i < 400; i++) csv.append("j").append(i).append(",0,60,1,").append(110 + 37 * (i % 23)).append(',').append(i % 3).append('\n');
        Cli.Result r = Cli.run("optimize", "--cluster", "16x8:A100-80GB", "--jobs", jobs(csv.toString()).toString(), "--solver", "ga", "--seconds", "0.01",
                "--iterations", "1000", "--output", "json");
        assertThat(r.exitCode()).as(r.err()).isZero();
        JsonNode o = new ObjectMapper().readTree(r.out());
        assertThat(o.get("timed_out").asBoolean()).isTrue();
    }
}
