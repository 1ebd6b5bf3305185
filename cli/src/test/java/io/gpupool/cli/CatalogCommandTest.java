package io.gpupool.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.GpuModel;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class CatalogCommandTest {
    private static final List<GpuModel> MODELS = GpuCatalog.standard().all();

    @Test
    void tablePrintsEveryModelId() {
        Cli.Result r = Cli.run("catalog");
        assertThat(r.exitCode()).isZero();
        assertThat(r.err()).isEmpty();
        assertThat(MODELS).isNotEmpty();
        List<String> firstColumn = r.out().lines().skip(2).takeWhile(l -> !l.isBlank())
                .map(l -> l.split("\\s+")[0]).toList();
        assertThat(firstColumn).containsExactlyElementsOf(MODELS.stream().map(GpuModel::id).toList());
        assertThat(r.out()).contains("ID", "MEMORY", "BF16 TFLOPS", "BANDWIDTH", "NVLINK");
    }

    @Test
    void contractIdsAreListed() {
        String out = Cli.run("catalog").out();
        assertThat(out).contains("V100-16GB", "V100-32GB", "T4", "A10", "L4", "L40S", "A100-40GB", "A100-80GB",
                "H100-80GB", "H200", "RTX-3090", "RTX-4090", "P100");
    }

    @Test
    void jsonIsAnArrayOfModelsWithAllFields() throws Exception {
        Cli.Result r = Cli.run("catalog", "--output", "json");
        assertThat(r.exitCode()).isZero();
        JsonNode root = new ObjectMapper().readTree(r.out());
        assertThat(root.isArray()).isTrue();
        assertThat(root.size()).isEqualTo(MODELS.size());
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < root.size(); i++) {
            JsonNode o = root.get(i);
            GpuModel m = MODELS.get(i);
            assertThat(o.fieldNames()).toIterable().containsExactly("id", "product_name", "memory_mib", "bf16_tflops",
                    "fp16_tflops", "memory_bandwidth_gbs", "tdp_watts", "idle_watts", "nvlink_generation", "nvlink_bandwidth_gbs",
                    "aliases", "source");
            assertThat(o.get("product_name").asText()).isEqualTo(m.productName());
            assertThat(o.get("memory_mib").asInt()).isEqualTo(m.memoryMib());
            assertThat(o.get("bf16_tflops").asDouble()).isEqualTo(m.bf16Tflops());
            assertThat(o.get("fp16_tflops").asDouble()).isEqualTo(m.fp16Tflops());
            assertThat(o.get("memory_bandwidth_gbs").asDouble()).isEqualTo(m.memoryBandwidthGBs());
            assertThat(o.get("tdp_watts").asInt()).isEqualTo(m.tdpWatts());
            assertThat(o.get("idle_watts").asInt()).isEqualTo(m.idleWatts());
            assertThat(o.get("nvlink_generation").asInt()).isEqualTo(m.nvlinkGeneration());
            assertThat(o.get("nvlink_bandwidth_gbs").asDouble()).isEqualTo(m.nvlinkBandwidthGBs());
            assertThat(o.get("aliases").isArray()).isTrue();
            assertThat(o.get("aliases").size()).isEqualTo(m.aliases().size());
            assertThat(o.get("source").asText()).isEqualTo(m.source());
            ids.add(o.get("id").asText());
        }
        assertThat(ids).containsExactlyElementsOf(MODELS.stream().map(GpuModel::id).toList());
    }

    @Test
    void formatIsCaseInsensitive() {
        Cli.Result r = Cli.run("catalog", "--output", "JSON");
        assertThat(r.exitCode()).isZero();
        assertThat(r.out()).startsWith("[");
    }

    @Test
    void unknownFormatExits2AndNamesTheChoices() {
        Cli.Result r = Cli.run("catalog", "--output", "xml");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("gpupool: Invalid value for option '--output'", "table", "json", "Usage: gpupool catalog");
        assertThat(r.out()).isEmpty();
    }
}
