package io.gpupool.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

class PredictEvaluateCommandTest {
    /** Long 4-GPU training runs and short evaluations, arriving faster than one server drains them. */
    private static Path trace(Path dir) throws Exception {
        Random rnd = new Random(5);
        StringBuilder csv = new StringBuilder("job_id,submit_time,duration,num_gpus,tenant,user,name\n");
        for (int i = 0; i < 300; i++) {
            boolean train = rnd.nextInt(4) == 0;
            long seconds = (long) ((train ? 36_000 : 300) * Math.exp(rnd.nextGaussian() * 0.2));
            csv.append("j").append(i).append(',').append(i * 1200).append(',').append(seconds).append(',')
                    .append(train ? 4 : 1).append(",team,alice,").append(train ? "train-run" : "eval-").append(rnd.nextInt(99)).append('\n');
        }
        return Files.writeString(dir.resolve("jobs.csv"), csv);
    }

    @Test
    void jsonHasOneRowPerModelWithTheContractFields(@TempDir Path dir) throws Exception {
        Cli.Result r = Cli.run("predict", "evaluate", "--trace", trace(dir).toString(), "--cluster", "1x8:A100-80GB",
                "--models", "global-median,history", "--output", "json", "--quiet");
        assertThat(r.exitCode()).as(r.err()).isZero();
        JsonNode rows = new ObjectMapper().readTree(r.out());
        assertThat(rows.size()).isEqualTo(3);
        assertThat(rows.get(2).get("model").asText()).isEqualTo("true-runtimes");
        for (JsonNode row : rows) {
            for (String f : new String[] {"model", "median_abs_log_error", "within_2x", "fcfs_avg_jct_s", "qssf_avg_jct_s", "oracle_avg_jct_s"}) {
                assertThat(row.has(f)).as(f).isTrue();
            }
            assertThat(row.get("fcfs_avg_jct_s").asDouble()).isGreaterThan(row.get("oracle_avg_jct_s").asDouble());
        }
        JsonNode history = rows.get(1);
        assertThat(history.get("within_2x").asDouble()).isGreaterThan(rows.get(0).get("within_2x").asDouble());
        assertThat(history.get("gap_closed").asDouble()).isGreaterThanOrEqualTo(0.5);
    }

    @Test
    void anUnknownModelIsRefusedBeforeAnyWork(@TempDir Path dir) throws Exception {
        Cli.Result r = Cli.run("predict", "evaluate", "--trace", trace(dir).toString(), "--cluster", "1x8:A100-80GB", "--models", "oracle");
        Cli.assertRefused(r, "name");
        assertThat(r.err()).contains("'oracle'");
    }
}
