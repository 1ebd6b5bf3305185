package io.gpupool.server;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpupool.server.TestServer.Reply;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static io.gpupool.server.TestServer.ADMIN;
import static org.assertj.core.api.Assertions.assertThat;

/** A job that names its model but not its GPU memory is sized by the advisor (pool: 2x8 A100-80GB, 1x4 T4). */
class ModelSizingApiTest {
    @TempDir static Path dir;
    static TestServer s;
    static String token;

    @BeforeAll
    static void start() {
        s = TestServer.start(TestServer.options(dir));
        token = s.tenantWithToken("team", 1);
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    private static Reply submit(Map<String, Object> fields) {
        Map<String, Object> body = new java.util.HashMap<>(fields);
        body.put("command", List.of("serve"));
        return s.post("/api/v1/jobs", token, body);
    }

    private static List<String> types(JsonNode job) {
        List<String> out = new ArrayList<>();
        job.path("gpuTypes").forEach(t -> out.add(t.asText()));
        return out;
    }

    @Test
    void a_shared_gpu_gets_the_memory_the_advisor_computes_for_its_model() {
        // 7B int4 inference, 2048 tokens: 5422 MiB (worked out in AdvisorMemorySizerTest)
        Reply r = submit(Map.of("numGpus", 1, "gpuMilli", 500, "model", Map.of("params", "7B", "mode", "infer", "precision", "int4")));
        assertThat(r.status()).as(r.body().toString()).isEqualTo(201);
        JsonNode job = s.get("/api/v1/jobs/" + r.text("id"), token).body();
        assertThat(job.path("gpuMemMib").asLong()).isEqualTo(5422);
        assertThat(types(job)).isEmpty();
        // a memory the job gives is kept
        Reply given = submit(Map.of("numGpus", 1, "gpuMilli", 500, "gpuMemMib", 8192, "model", Map.of("params", "7B", "mode", "infer", "precision", "int4")));
        assertThat(s.get("/api/v1/jobs/" + given.text("id"), token).body().path("gpuMemMib").asLong()).isEqualTo(8192);
    }

    @Test
    void whole_gpus_are_narrowed_to_the_cards_that_hold_the_model() {
        // 7B bf16 training over 8 GPUs: 16379 MiB per GPU, more than a 16 GB T4 can give
        Reply r = submit(Map.of("numGpus", 8, "model", Map.of("params", "7B", "mode", "train")));
        assertThat(r.status()).as(r.body().toString()).isEqualTo(201);
        JsonNode job = s.get("/api/v1/jobs/" + r.text("id"), token).body();
        assertThat(types(job)).contains("A100-80GB", "L4").doesNotContain("T4");
        assertThat(job.path("gpuMemMib").asLong()).as("a whole GPU keeps all its memory").isZero();
    }

    @Test
    void a_model_no_card_of_the_pool_can_hold_is_refused() {
        // on one GPU the same training needs 118 GiB: only an H200 holds it, and this pool has none
        Reply r = submit(Map.of("numGpus", 1, "model", Map.of("params", "7B", "mode", "train", "precision", "bf16")));
        assertThat(r.status()).isEqualTo(422);
        // sizing narrowed the request's GPU types to cards this pool does not have: the field the stored request shows
        assertThat(r.text("field")).isEqualTo("gpuTypes");
        Reply none = submit(Map.of("numGpus", 1, "gpuTypes", List.of("T4"), "model", Map.of("params", "7B", "mode", "train")));
        assertThat(none.status()).isEqualTo(422);
        assertThat(none.text("field")).isEqualTo("model.params");
        assertThat(none.text("message")).contains("needs 118.28 GiB per GPU", "no allowed GPU model [T4] holds that");
    }

    @Test
    void a_bad_model_names_the_field_and_the_rule() {
        record Case(Object model, int status, String field, String says) {}
        for (Case c : List.of(
                new Case(Map.of("params", "7B", "mode", "serve"), 422, "model.mode", "must be train or infer"),
                new Case(Map.of("params", "seven"), 422, "model.params", "expected a count like 7B"),
                new Case(Map.of("params", "7B", "mode", "train", "precision", "int4"), 422, "model.precision", "inference format"),
                new Case(Map.of("mode", "train"), 422, "model.params", "is required"),
                new Case(Map.of("params", "7B", "layers", 32), 400, "model.layers", "unknown field"),
                new Case("7B", 400, "model", "must be a JSON object"))) {
            Reply r = submit(Map.of("numGpus", 1, "gpuMilli", 500, "model", c.model()));
            assertThat(r.status()).as("%s", c).isEqualTo(c.status());
            assertThat(r.text("field")).as("%s", c).isEqualTo(c.field());
            assertThat(r.text("message")).as("%s", c).contains(c.says());
        }
    }
}
