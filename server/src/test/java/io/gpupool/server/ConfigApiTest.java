package io.gpupool.server;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpupool.server.TestServer.Reply;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static io.gpupool.server.TestServer.ADMIN;
import static io.gpupool.server.TestServer.eventually;
import static org.assertj.core.api.Assertions.assertThat;

/** GET/PUT /api/v1/config carry the configuration tree; {@code --config FILE} applies the same tree at start. */
class ConfigApiTest {
    @TempDir Path dir;

    private static Reply put(TestServer s, Object body) {
        return s.call("PUT", "/api/v1/config", ADMIN, body, Map.of());
    }

    private static JsonNode config(TestServer s) {
        Reply r = s.get("/api/v1/config", ADMIN);
        assertThat(r.status()).isEqualTo(200);
        return r.body();
    }

    private static String state(TestServer s, String id, String token) {
        return s.get("/api/v1/jobs/" + id, token).text("state");
    }

    private static Map<String, Object> oneGpu(String name) {
        return Map.of("name", name, "numGpus", 1, "command", List.of("sleep", "1000"));
    }

    @Test
    void getShowsTheWholeTreeInForceAndPutTakesItBackUnchanged() {
        try (TestServer s = TestServer.start(TestServer.options(dir))) {
            String member = s.tenantWithToken("vision", 2);
            JsonNode c = config(s);
            assertThat(c.path("policy").path("name").asText()).isEqualTo("fair-share");
            assertThat(c.path("policy").path("args").path("halfLifeMs").asLong()).isEqualTo(3_600_000L);
            assertThat(c.path("placement").path("scorers").path("binpack").asDouble()).isEqualTo(1.0);
            assertThat(c.path("placement").path("candidateLimit").asInt()).isEqualTo(32);
            assertThat(c.path("tenants").path("vision").path("weight").asDouble()).isEqualTo(2.0);
            assertThat(c.path("predictor").path("name").asText()).isEqualTo("history");
            assertThat(c.path("defaultRuntime").asText()).isEqualTo("1h");
            // members read it, only admins change it
            assertThat(s.get("/api/v1/config", member).status()).isEqualTo(200);
            assertThat(s.call("PUT", "/api/v1/config", member, c, Map.of()).status()).isEqualTo(403);
            Reply same = put(s, c);
            assertThat(same.status()).isEqualTo(200);
            assertThat(same.body()).isEqualTo(c);
            assertThat(config(s)).isEqualTo(c);
        }
    }

    @Test
    void lasThresholdsSetOverTheApiDecideWhichJobRuns() {
        try (TestServer s = TestServer.start(TestServer.options(dir).withCluster("1x1:T4"))) {
            assertThat(put(s, Map.of("policy", "las")).status()).isEqualTo(200);
            String t = s.tenantWithToken("team", 1);
            String first = s.post("/api/v1/jobs", t, oneGpu("first")).text("id");
            eventually("the first job runs", () -> state(s, first, t).equals("RUNNING"));
            sleep(1500);
            String second = s.post("/api/v1/jobs", t, oneGpu("second")).text("id");
            // the default thresholds (1 and 10 GPU-hours): both jobs are in the first queue, the second waits its turn
            sleep(1500);
            assertThat(state(s, second, t)).isEqualTo("PENDING");
            assertThat(state(s, first, t)).isEqualTo("RUNNING");

            Reply r = put(s, Map.of("policy", Map.of("name", "las", "args", Map.of("thresholdsGpuSec", List.of(1, 3600)))));
            assertThat(r.status()).as(r.body().toString()).isEqualTo(200);
            assertThat(r.body().path("policy").path("args").path("thresholdsGpuSec").get(0).asDouble()).isEqualTo(1.0);
            // after 1 GPU-second the first job drops to the second queue: the newcomer takes the GPU from it
            eventually("the second job runs", () -> state(s, second, t).equals("RUNNING"));
            assertThat(state(s, first, t)).isEqualTo("PENDING");
            assertThat(s.get("/api/v1/jobs/" + first, t).body().path("preemptions").asInt()).isEqualTo(1);
            s.delete("/api/v1/jobs/" + first, t);
            s.delete("/api/v1/jobs/" + second, t);
        }
    }

    @Test
    void aPartialTreeChangesOnlyWhatItNamesAndTenantsAreCreatedOrUpdated() {
        try (TestServer s = TestServer.start(TestServer.options(dir))) {
            s.tenantWithToken("vision", 2);
            assertThat(s.call("PUT", "/api/v1/tenants/vision", ADMIN, Map.of("sharedAccountNodes", true), Map.of()).status()).isEqualTo(200);
            Reply r = put(s, Map.of("placement", Map.of("candidateLimit", 0),
                    "tenants", Map.of("vision", Map.of("limitGpus", 8), "nlp", Map.of("weight", 3, "guaranteedGpus", 4))));
            assertThat(r.status()).as(r.body().toString()).isEqualTo(200);
            JsonNode c = config(s);
            assertThat(c.path("policy").path("name").asText()).isEqualTo("fair-share");
            assertThat(c.path("placement").path("candidateLimit").asInt()).isZero();
            assertThat(c.path("placement").path("scorers").size()).isEqualTo(2);
            JsonNode tenants = s.get("/api/v1/tenants", ADMIN).body().path("tenants");
            JsonNode vision = find(tenants, "vision");
            assertThat(vision.path("weight").asDouble()).isEqualTo(2.0);
            assertThat(vision.path("limitGpus").asDouble()).isEqualTo(8.0);
            assertThat(vision.path("sharedAccountNodes").asBoolean()).isTrue();
            JsonNode nlp = find(tenants, "nlp");
            assertThat(nlp.path("weight").asDouble()).isEqualTo(3.0);
            assertThat(nlp.path("guaranteedGpus").asDouble()).isEqualTo(4.0);
            assertThat(nlp.path("sharedAccountNodes").asBoolean()).isFalse();
            // a new tenant can submit at once
            assertThat(s.post("/api/v1/jobs", ADMIN, Map.of("tenant", "nlp", "numGpus", 1, "command", List.of("x"))).status()).isEqualTo(201);
        }
    }

    @Test
    void aBadTreeChangesNothingAndNamesTheFieldAt400Or422() {
        try (TestServer s = TestServer.start(TestServer.options(dir))) {
            JsonNode before = config(s);
            Reply bad = put(s, Map.of("policy", "priority", "tenants", Map.of("fine", Map.of("weight", 2), "broken", Map.of("weight", 0))));
            assertThat(bad.status()).isEqualTo(422);
            assertThat(bad.text("field")).isEqualTo("tenants.broken.weight");
            assertThat(config(s)).isEqualTo(before);
            assertThat(s.get("/api/v1/tenants", ADMIN).body().path("tenants").toString()).doesNotContain("fine");

            assertField(put(s, Map.of("policy", Map.of("name", "las", "args", Map.of("thresholdsGpuSec", List.of(3600, 100))))),
                    422, "policy.args.thresholdsGpuSec[1]");
            assertField(put(s, Map.of("policy", Map.of("name", "las", "args", Map.of("thresholds", List.of(1))))), 422, "policy.args.thresholds");
            assertField(put(s, Map.of("policy", "srtf-oracle")), 422, "policy");
            assertField(put(s, Map.of("placement", Map.of("scorers", Map.of("packing", 1)))), 422, "placement.scorers.packing");
            assertField(put(s, Map.of("placement", Map.of("candidateLimit", "all"))), 400, "placement.candidateLimit");
            assertField(put(s, Map.of("placement", List.of("binpack"))), 400, "placement");
            assertField(put(s, Map.of("tenants", Map.of("Bad Name", Map.of()))), 422, "tenants.Bad Name");
            assertField(put(s, Map.of("tenants", Map.of("big", Map.of("weight", 1e9)))), 422, "tenants.big.weight");
            assertField(put(s, Map.of("predictor", "gbt")), 422, "predictor");
            assertField(put(s, Map.of("defaultRuntime", "soon")), 422, "defaultRuntime");
            assertField(put(s, Map.of("queue", "fifo")), 400, "queue");
            assertField(put(s, List.of(1)), 400, "body");
            assertField(put(s, Map.of("agingPerHour", "fast")), 400, "agingPerHour");
            assertField(put(s, Map.of("defaultRuntimeSec", 60, "defaultRuntime", "1m")), 422, "defaultRuntimeSec");
            assertThat(config(s)).isEqualTo(before);
        }
    }

    @Test
    void theFlatFieldsOfOlderClientsAreShorthandsForTheTree() {
        try (TestServer s = TestServer.start(TestServer.options(dir))) {
            Reply r = put(s, Map.of("policy", "priority", "agingPerHour", 5, "backfillDepth", 7, "defaultRuntimeSec", 120));
            assertThat(r.status()).as(r.body().toString()).isEqualTo(200);
            JsonNode c = config(s);
            assertThat(c.path("policy").path("args").path("agingPerHour").asDouble()).isEqualTo(5.0);
            assertThat(c.path("policy").path("args").path("backfillDepth").asInt()).isEqualTo(7);
            assertThat(c.path("defaultRuntime").asText()).isEqualTo("2m");
            // a setting the policy in force does not have changes nothing, as before the tree
            assertThat(put(s, Map.of("fairShareHalfLifeSec", 60)).status()).isEqualTo(200);
            assertThat(config(s)).isEqualTo(c);
            assertThat(put(s, Map.of("policy", "fair-share", "fairShareHalfLifeSec", 60)).status()).isEqualTo(200);
            assertThat(config(s).path("policy").path("args").path("halfLifeMs").asLong()).isEqualTo(60_000);
        }
    }

    @Test
    void aConfigFileWinsOverTheSavedConfigurationAtEveryStart() throws Exception {
        Path file = dir.resolve("pool.yaml");
        Files.writeString(file, """
                policy:
                  name: las
                  args: {thresholdsGpuSec: [120, 1200]}
                placement: spread
                tenants:
                  vision: {weight: 2, limitGpus: 8}
                defaultRuntime: 30m
                """);
        Path data = dir.resolve("data");
        try (TestServer s = TestServer.start(TestServer.options(data).withConfig(file))) {
            assertThat(s.output).contains("configuration: " + file);
            JsonNode c = config(s);
            assertThat(c.path("policy").path("args").path("thresholdsGpuSec").get(0).asDouble()).isEqualTo(120.0);
            assertThat(c.path("placement").path("scorers").has("spread")).isTrue();
            assertThat(c.path("tenants").path("vision").path("limitGpus").asDouble()).isEqualTo(8.0);
            assertThat(c.path("defaultRuntime").asText()).isEqualTo("30m");
            assertThat(put(s, Map.of("policy", "fcfs", "tenants", Map.of("vision", Map.of("limitGpus", 4), "nlp", Map.of()))).status()).isEqualTo(200);
        }
        // the file again: its values run, the tenant it does not name stays
        try (TestServer s = TestServer.start(TestServer.options(data).withConfig(file))) {
            JsonNode c = config(s);
            assertThat(c.path("policy").path("name").asText()).isEqualTo("las");
            assertThat(c.path("tenants").path("vision").path("limitGpus").asDouble()).isEqualTo(8.0);
            assertThat(c.path("tenants").has("nlp")).isTrue();
            assertThat(put(s, Map.of("policy", "fcfs")).status()).isEqualTo(200);
        }
        // without the file the saved configuration runs
        try (TestServer s = TestServer.start(TestServer.options(data))) {
            assertThat(config(s).path("policy").path("name").asText()).isEqualTo("fcfs");
            assertThat(config(s).path("defaultRuntime").asText()).isEqualTo("30m");
        }
        // --policy beside the file overrides the file's (the file's settings of that policy kept)
        try (TestServer s = TestServer.start(TestServer.options(data).withConfig(file).withPolicy("las"))) {
            assertThat(config(s).path("policy").path("args").path("thresholdsGpuSec").get(0).asDouble()).isEqualTo(120.0);
        }
    }

    @Test
    void aBadConfigFileStopsTheStartNamingItsLine() throws Exception {
        Path file = dir.resolve("bad.yaml");
        Files.writeString(file, "policy: las\nplacement:\n  gpuPolicy: tight\n");
        try (TestServer s = TestServer.start(TestServer.options(dir.resolve("d")).withConfig(file))) {
            throw new AssertionError("started with a bad file: " + s.output);
        } catch (io.gpupool.model.SpecException e) {
            assertThat(e.where()).isEqualTo(file + ":3");
            assertThat(e.field()).isEqualTo("placement.gpuPolicy");
        }
        // nothing was opened: the data directory was not created
        assertThat(Files.exists(dir.resolve("d"))).isFalse();
    }

    private static void assertField(Reply r, int status, String field) {
        assertThat(r.status()).as(r.body().toString()).isEqualTo(status);
        assertThat(r.text("field")).as(r.body().toString()).isEqualTo(field);
        assertThat(r.body().has("rule")).isTrue();
    }

    private static JsonNode find(JsonNode tenants, String name) {
        for (JsonNode t : tenants) if (t.path("name").asText().equals(name)) return t;
        throw new AssertionError("no tenant " + name + " in " + tenants);
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
