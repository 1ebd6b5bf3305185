package io.gpupool.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class GpusCommandTest {

    @Test
    void tableShowsTheFakeInventoryAndAReading() {
        Cli.Result r = Cli.run("gpus", "--fake-gpus", "2xA100-80GB,1xL40S");
        assertThat(r.exitCode()).isZero();
        assertThat(r.out()).contains("backend fake", "CPUs", "GiB RAM");
        assertThat(r.out().lines().filter(l -> l.contains("GPU-")).toList()).hasSize(3);
        assertThat(r.out()).contains("A100-80GB", "L40S", "81920 MiB", "60 W");
        assertThat(r.out().lines().filter(l -> l.contains("A100-80GB")).findFirst().orElseThrow()).contains(" 1 ").contains("NVIDIA A100 80GB SXM4");
    }

    @Test
    void jsonCarriesTheInventoryTheAgentRegistersWith() throws Exception {
        Cli.Result r = Cli.run("gpus", "--fake-gpus", "8xH100-80GB", "--output", "json");
        assertThat(r.exitCode()).isZero();
        JsonNode root = new ObjectMapper().readTree(r.out());
        JsonNode gpus = root.get("inventory").get("gpus");
        assertThat(gpus.size()).isEqualTo(8);
        assertThat(gpus.get(3).get("model_id").asText()).isEqualTo("H100-80GB");
        assertThat(gpus.get(3).get("nvlink_peers").size()).isEqualTo(7);
        assertThat(root.get("inventory").get("cpu_count").asInt()).isPositive();
        assertThat(root.get("telemetry").get(0).get("memory_total_mib").asLong()).isEqualTo(81920);
        assertThat(root.get("passed_over").size()).isZero();
    }

    @Test
    void badInputIsAClearError() {
        Cli.Result r = Cli.run("gpus", "--fake-gpus", "4xA100-90GB");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("gpupool: --fake-gpus item 1 '4xA100-90GB': field 'gpu model'");
        Cli.Result b = Cli.run("gpus", "--backend", "nvml", "--fake-gpus", "1xT4");
        assertThat(b.exitCode()).isEqualTo(2);
        assertThat(b.err()).contains("gpupool: --fake-gpus: ");
    }

    @Test
    void aMachineWithoutGpusSaysWhyEachBackendFailed() {
        Cli.Result r = Cli.run("gpus", "--backend", "nvidia-smi", "--nvidia-smi", "/nonexistent/nvidia-smi");
        assertThat(r.exitCode()).isEqualTo(1);
        assertThat(r.err()).startsWith("gpupool: no GPU backend works on this machine:").contains("nvidia-smi: cannot run /nonexistent/nvidia-smi");
    }
}
