package io.gpupool.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class AdviseCommandTest {
    @Test
    void jsonHasTheContractFields() throws Exception {
        Cli.Result r = Cli.run("advise", "--params", "7B", "--mode", "infer", "--precision", "fp16",
                "--layers", "32", "--hidden", "4096", "--kv-heads", "32", "--output", "json");
        assertThat(r.exitCode()).as(r.err()).isZero();
        JsonNode o = new ObjectMapper().readTree(r.out());
        for (String f : new String[] {"weights_bytes", "gradients_bytes", "optimizer_bytes", "activations_bytes", "kv_cache_bytes",
                "allocated_bytes", "reserved_bytes", "per_gpu_bytes", "recommendations"}) {
            assertThat(o.has(f)).as(f).isTrue();
        }
        assertThat(o.get("weights_bytes").asLong()).isEqualTo(14_000_000_000L);
        assertThat(o.get("kv_cache_bytes").asLong()).isEqualTo(1L << 30);   // Llama-2-7B, 2048 tokens, fp16
        assertThat(o.get("reserved_bytes").asLong()).isGreaterThan(o.get("allocated_bytes").asLong());
        assertThat(o.get("per_gpu_bytes").asLong()).isGreaterThan(o.get("reserved_bytes").asLong());
        JsonNode recs = o.get("recommendations");
        assertThat(recs.size()).isGreaterThan(5);
        for (JsonNode rec : recs) {
            assertThat(rec.get("model").asText()).isNotEmpty();
            assertThat(rec.get("count").asInt()).isPositive();
            assertThat(rec.get("step_seconds").asDouble()).isPositive();
            assertThat(rec.get("per_gpu_bytes").asLong()).isLessThanOrEqualTo(rec.get("gpu_memory_bytes").asLong());
        }
    }

    @Test
    void explainShowsTheFormulaBehindEachNumber() {
        Cli.Result r = Cli.run("advise", "--params", "7B", "--mode", "train", "--precision", "bf16", "--explain");
        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.out()).contains("16.0 bytes per parameter", "weights = 7B params x 2 bytes (bf16)",
                "fp32 master copy 4", "L x 34 s b h", "fragmentation = ", "rounding = ", "cuda_context = ",
                "step FLOPs = 6 x (P + L S h)", "energy per token");
    }

    @Test
    void badInputIsRefusedNamingTheOption() {
        Cli.Result r = Cli.run("advise", "--params", "7B", "--mode", "train", "--precision", "int4");
        Cli.assertRefused(r, "precision");
        Cli.Result m = Cli.run("advise", "--params", "lots", "--mode", "train");
        Cli.assertRefused(m, "params");
    }
}
