package io.gpupool.predict.sizing;

import io.gpupool.model.GangShape;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.GpuMemorySizer.Need;
import io.gpupool.model.GpuShare;
import io.gpupool.model.JobSpec;
import io.gpupool.model.ModelSize;
import io.gpupool.model.SpecException;
import io.gpupool.sim.trace.GpupoolCsvFormat;
import io.gpupool.sim.trace.Trace;
import io.gpupool.sim.trace.TraceContext;
import io.gpupool.sim.trace.TraceFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A job that names its model but not its GPU memory gets the advisor's figure; the numbers are checked by hand. */
class AdvisorMemorySizerTest {
    private final AdvisorMemorySizer sizer = new AdvisorMemorySizer(GpuCatalog.standard());
    @TempDir Path dir;

    @Test
    void aSharedGpuGetsTheMemoryOfA7bInt4InferenceServer() {
        // Llama-2-7B shape (6.74B params, 32 layers, 32 KV heads of 128): weights 7e9 x (0.5 + 4/128) = 3.72e9 B (int4 and
        // its fp16 group scales); KV cache 2 x 32 x 32 x 128 x 2048 tokens x 2 B = 1 GiB; prefill activations 0.10e9 B;
        // caching allocator: 226 tensors x 1 MiB rounding + 17.8e6 B fragmentation; CUDA context 512 MiB.
        // 3.71875e9 + 1.073741824e9 + 0.100791296e9 + 0.236978176e9 + 0.017786699e9 + 0.536870912e9 = 5.684918907e9 B
        // = 5421.6 MiB -> 5422 MiB.
        Need need = sizer.need(new ModelSize("7B", "infer", "int4"), new GangShape(1, 1));
        assertThat(need.perGpuMib()).isEqualTo(5422);
        assertThat(need.share(new GpuShare(500, 0))).isEqualTo(new GpuShare(500, 5422));
        assertThat(need.share(new GpuShare(500, 2048))).as("a given memory is kept").isEqualTo(new GpuShare(500, 2048));
        assertThat(need.allowedModels(new GpuShare(500, 5422), Set.of())).as("a share's models are not narrowed").isEmpty();
        assertThat(need.explanation()).isEqualTo("7B infer int4 on tp=1 dp=1 needs 5.29 GiB per GPU");
    }

    @Test
    void wholeGpusAreNarrowedToTheCardsThatHoldA7bTrainingJobSplitOverEight() {
        // mixed-precision AdamW: 2 + 2 + 12 = 16 bytes per parameter, 7e9 x 16 / 8 GPUs = 14e9 B per GPU before
        // activations; with them, the allocator and the context 17.17e9 B = 16379 MiB. A card may plan on 95% of its
        // memory, so 16 GB cards (15.2 GiB usable) are out, 24 GB ones in.
        Need need = sizer.need(new ModelSize("7B", "train", "bf16"), new GangShape(1, 8));
        assertThat(need.perGpuMib()).isEqualTo(16379);
        assertThat(need.allowedModels(GpuShare.WHOLE_GPU, Set.of())).containsExactly(
                "V100-32GB", "A10", "L4", "L40S", "A100-40GB", "A100-80GB", "H100-80GB", "H200", "RTX-3090", "RTX-4090");
        assertThat(need.allowedModels(GpuShare.WHOLE_GPU, Set.of("T4", "A10"))).containsExactly("A10");
        assertThat(need.share(GpuShare.WHOLE_GPU)).as("a whole GPU keeps all its memory").isEqualTo(GpuShare.WHOLE_GPU);
    }

    @Test
    void onOneGpuTheSameTrainingJobFitsOnlyTheLargestCard() {
        // 7e9 x 16 B = 112e9 B = 104 GiB of weights, gradients and optimizer alone: only the H200 (141 GB) holds it
        Need need = sizer.need(new ModelSize("7B", "train", "bf16"), new GangShape(1, 1));
        assertThat(need.allowedModels(GpuShare.WHOLE_GPU, Set.of())).containsExactly("H200");
        assertThatThrownBy(() -> need.allowedModels(GpuShare.WHOLE_GPU, Set.of("A100-80GB")))
                .isInstanceOfSatisfying(SpecException.class, e -> assertThat(e.field()).isEqualTo("params"))
                .hasMessageContaining("118.28 GiB");
    }

    @Test
    void badSizesNameTheFieldAndTheRule() {
        assertThatThrownBy(() -> sizer.need(new ModelSize("seven", null, null), new GangShape(1, 1)))
                .isInstanceOfSatisfying(SpecException.class, e -> assertThat(e.field()).isEqualTo("params"));
        assertThatThrownBy(() -> sizer.need(new ModelSize("7B", "finetune", null), new GangShape(1, 1)))
                .satisfies(e -> assertThat(((SpecException) e).field()).isEqualTo("mode"));
        assertThatThrownBy(() -> sizer.need(new ModelSize("7B", "train", "int4"), new GangShape(1, 1)))
                .satisfies(e -> assertThat(((SpecException) e).field()).isEqualTo("precision"));
    }

    // ---- the trace reader ----------------------------------------------------------------------

    private Map<String, JobSpec> read(String... rows) throws IOException {
        Path f = dir.resolve("t.csv");
        Files.writeString(f, "job_id,submit_time,duration,num_gpus,gpu_milli,gpu_mem_mib,gpu_type,model_params,model_mode,model_precision\n"
                + String.join("\n", rows) + "\n");
        TraceContext context = new TraceContext(GpuCatalog.standard(), 8).withSizer(sizer);
        Map<String, JobSpec> jobs = new HashMap<>();
        try (Trace.Cursor c = TraceFile.open(f, new GpupoolCsvFormat(), context, false).open()) {
            while (c.hasNext()) {
                JobSpec s = c.next().spec();
                jobs.put(s.id(), s);
            }
        }
        return jobs;
    }

    @Test
    void theTraceReaderFillsMemoryFromTheModelColumnsWhenTheRowGivesNone() throws IOException {
        Map<String, JobSpec> jobs = read(
                "serve,0,60,1,500,,,7B,infer,int4",
                "given,0,60,1,500,8192,,7B,infer,int4",
                "train,0,60,8,,,,7B,train,bf16",
                "plain,0,60,1,,,,,,");
        assertThat(jobs.get("serve").share()).isEqualTo(new GpuShare(500, 5422));
        assertThat(jobs.get("given").share()).isEqualTo(new GpuShare(500, 8192));
        assertThat(jobs.get("train").share()).isEqualTo(GpuShare.WHOLE_GPU);
        assertThat(jobs.get("train").allowedModels()).doesNotContain("T4", "V100-16GB", "P100").contains("A100-80GB", "L4");
        assertThat(jobs.get("plain").allowedModels()).isEmpty();
    }

    @Test
    void aBadModelCellStopsTheReadWithFileLineAndColumn() {
        assertThatThrownBy(() -> read("ok,0,60,1,,,,7B,infer,int4", "bad,0,60,1,,,,7B,serve,int4"))
                .isInstanceOfSatisfying(SpecException.class, e -> assertThat(e.where() + "/" + e.field()).endsWith("t.csv:3/model_mode"));
        assertThatThrownBy(() -> read("huge,0,60,1,,,A100-80GB,70B,train,bf16"))
                .isInstanceOfSatisfying(SpecException.class, e -> assertThat(e.where() + "/" + e.field()).endsWith("t.csv:2/model_params"));
    }
}
