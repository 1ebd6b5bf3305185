package io.gpupool.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code simulate --config FILE}: the configuration tree gives what the flags give, and the flags override it. */
class SimulateConfigTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<String> WORKLOAD = List.of("--synthetic", "400,load=1.5,tenants=3", "--seed", "5", "--cluster", "2x8:A100-80GB",
            "--output", "json");
    @TempDir Path dir;

    private Path config(String name, String yaml) throws IOException {
        Path p = dir.resolve(name);
        Files.writeString(p, yaml);
        return p;
    }

    private static Cli.Result simulate(String... args) {
        List<String> all = new ArrayList<>(List.of("simulate"));
        all.addAll(WORKLOAD);
        all.addAll(List.of(args));
        Cli.Result r = Cli.run(all.toArray(String[]::new));
        assertThat(r.exitCode()).as(r.err()).isZero();
        return r;
    }

    private static JsonNode json(Cli.Result r) throws IOException {
        return JSON.readTree(r.out());
    }

    @Test
    void aConfigFileGivesTheSameFiguresAsTheSameSettingsGivenAsFlags() throws IOException {
        Path file = config("pool.yaml", """
                policy: qssf
                placement:
                  scorers: {spread: 2, topology: 1}
                  candidateLimit: 8
                predictor: {name: none}
                defaultRuntime: 1h
                """);
        String fromFile = simulate("--config", file.toString()).out();
        String fromFlags = simulate("--policy", "qssf", "--placement", "spread:2,topology;limit=8", "--predictor", "none").out();
        assertThat(fromFile).isEqualTo(fromFlags);
        // and the settings matter: the default placement and predictor give other figures
        assertThat(simulate("--policy", "qssf").out()).isNotEqualTo(fromFile);
    }

    @Test
    void thePolicySettingsOfTheFileChangeTheFiguresAndEachComparedPolicyTakesTheFilesPlacement() throws IOException {
        Path las = config("las.yaml", """
                policy:
                  name: las
                  args:
                    thresholdsGpuSec: [60, 600]
                placement: spread
                """);
        JsonNode tuned = json(simulate("--config", las.toString())).get(0);
        JsonNode stock = json(simulate("--policy", "las", "--placement", "spread")).get(0);
        assertThat(tuned.get("policy").asText()).isEqualTo("las");
        assertThat(tuned.get("avg_jct_s").asDouble()).isNotEqualTo(stock.get("avg_jct_s").asDouble());
        // --policy overrides the file's: fcfs gets the file's placement with its own (no) settings, las keeps the file's
        JsonNode both = json(simulate("--config", las.toString(), "--policy", "fcfs,las"));
        assertThat(both.get(0).toString()).isEqualTo(json(simulate("--policy", "fcfs", "--placement", "spread")).get(0).toString());
        assertThat(both.get(1).toString()).isEqualTo(tuned.toString());
        // --placement overrides the file's placement
        assertThat(json(simulate("--config", las.toString(), "--placement", "binpack,topology")).get(0).get("placement").asText())
                .isEqualTo("binpack,topology");
    }

    @Test
    void theFilesTenantWeightsReachFairShare() throws IOException {
        Path weighted = config("tenants.yaml", """
                policy: fair-share
                tenants:
                  team-c: {weight: 20}
                """);
        JsonNode even = json(simulate("--policy", "fair-share")).get(0);
        JsonNode favoured = json(simulate("--config", weighted.toString())).get(0);
        assertThat(waitOf(favoured, "team-c")).isLessThan(waitOf(even, "team-c"));
    }

    @Test
    void aBadFileIsRefusedWithItsLineAndPathBeforeAnyWork() throws IOException {
        Path bad = config("bad.yaml", """
                policy:
                  name: las
                  args:
                    thresholdsGpuSec: [3600, 100]
                """);
        Cli.Result r = Cli.run("simulate", "--synthetic", "10", "--cluster", "1x8:A100-80GB", "--config", bad.toString());
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains(bad + ":4", "policy.args.thresholdsGpuSec[1]", "must be greater than 3600");
        Cli.Result predictor = Cli.run("simulate", "--synthetic", "10", "--cluster", "1x8:A100-80GB",
                "--config", config("p.yaml", "\npredictor: psychic\n").toString());
        assertThat(predictor.exitCode()).isEqualTo(2);
        assertThat(predictor.err()).contains("p.yaml:2", "predictor", "history", "gbt");
        Cli.Result missing = Cli.run("simulate", "--synthetic", "10", "--cluster", "1x8:A100-80GB", "--config", dir.resolve("nope.yaml").toString());
        assertThat(missing.exitCode()).isEqualTo(2);
        assertThat(missing.err()).contains("nope.yaml", "does not exist");
    }

    @Test
    void theExampleFileOfTheRepositoryRunsAReplay() throws IOException {
        Path example = Path.of(System.getProperty("gpupool.repo.root", "..")).resolve("examples/pool-config.yaml");
        JsonNode r = json(simulate("--config", example.toString()));
        assertThat(r.get(0).get("policy").asText()).isEqualTo("las");
        assertThat(r.get(0).get("jobs").asInt()).isEqualTo(400);
    }

    @Test
    void theServerReadsTheSameFileAndStopsAtABadOneBeforeOpeningItsStore() throws IOException {
        Path bad = config("server.yaml", "policy: srtf-oracle\n");
        Cli.Result r = Cli.run("server", "--config", bad.toString(), "--data", dir.resolve("data").toString(), "--port", "0");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains(bad + ":1", "policy", "not available here");
        assertThat(Files.exists(dir.resolve("data"))).isFalse();
    }

    private static double waitOf(JsonNode result, String tenant) {
        for (JsonNode t : result.get("tenants")) {
            if (t.path("tenant").asText().equals(tenant)) return t.path("avg_wait_s").asDouble();
        }
        throw new AssertionError("no tenant " + tenant + " in " + result.get("tenants"));
    }
}
