package io.gpupool.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/** A real server on a loopback port for tests, with a small HTTP client. */
public final class TestServer implements AutoCloseable {
    public static final String ADMIN = "test-admin-token-0123456789";
    public static final ObjectMapper JSON = new ObjectMapper();
    public final GpupoolServer server;
    public final String base;
    public final String output;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();

    /** An answer: status and body (JSON when it is JSON, else a text node). */
    public record Reply(int status, JsonNode body, HttpResponse<String> raw) {
        public String text(String field) { return body.path(field).asText(); }
    }

    private TestServer(ServerOptions o) {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        this.server = GpupoolServer.start(o, new PrintStream(buf, true, StandardCharsets.UTF_8));
        this.output = buf.toString(StandardCharsets.UTF_8);
        this.base = "http://127.0.0.1:" + server.port();
    }

    public static ServerOptions options(Path data) {
        // agents' waiting reports are held up to half a second, so tests (and the fuzz test's reports) do not wait long
        return ServerOptions.defaults().withHost("127.0.0.1").withPort(0).withDataDir(data).withAdminToken(ADMIN)
                .withCluster("2x8:A100-80GB,1x4:T4").withRateLimit(0).withAgents(new io.gpupool.server.core.AgentSettings(500, 30_000));
    }

    public static TestServer start(ServerOptions o) {
        return new TestServer(o);
    }

    public Reply call(String method, String path, String token, Object body, Map<String, String> headers) {
        try {
            HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30));
            if (token != null) b.header("Authorization", "Bearer " + token);
            headers.forEach(b::header);
            if (body != null) {
                String s = body instanceof String str ? str : JSON.writeValueAsString(body);
                if (!headers.containsKey("Content-Type")) b.header("Content-Type", "application/json");
                b.method(method, HttpRequest.BodyPublishers.ofString(s));
            } else {
                b.method(method, HttpRequest.BodyPublishers.noBody());
            }
            HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
            JsonNode json;
            try {
                json = r.body().isEmpty() ? JSON.nullNode() : JSON.readTree(r.body());
            } catch (Exception e) {
                json = JSON.getNodeFactory().textNode(r.body());
            }
            return new Reply(r.statusCode(), json, r);
        } catch (Exception e) {
            throw new AssertionError(method + " " + path + " failed: " + e, e);
        }
    }

    public Reply get(String path, String token) { return call("GET", path, token, null, Map.of()); }
    public Reply post(String path, String token, Object body) { return call("POST", path, token, body, Map.of()); }

    /**
     * Submits a one-GPU job named {@code name} that runs {@code sh -c script}, with the fields of {@code more} (null: none)
     * on top; asserts it was accepted (201) and returns its id.
     */
    public String submitScript(String token, String name, String script, Map<String, Object> more) {
        Map<String, Object> body = new java.util.LinkedHashMap<>();
        body.put("name", name);
        body.put("numGpus", 1);
        body.put("command", java.util.List.of("sh", "-c", script));
        if (more != null) body.putAll(more);
        Reply r = post("/api/v1/jobs", token, body);
        org.assertj.core.api.Assertions.assertThat(r.status()).as(r.body().toString()).isEqualTo(201);
        return r.text("id");
    }
    public Reply delete(String path, String token) { return call("DELETE", path, token, null, Map.of()); }

    /** Creates a tenant and returns a member token for it. */
    public String tenantWithToken(String tenant, double weight) {
        Reply t = post("/api/v1/tenants", ADMIN, Map.of("name", tenant, "weight", weight));
        if (t.status() != 201) throw new AssertionError("tenant: " + t.body());
        Reply tok = post("/api/v1/tenants/" + tenant + "/tokens", ADMIN, Map.of("label", "test"));
        if (tok.status() != 201) throw new AssertionError("token: " + tok.body());
        return tok.text("token");
    }

    /** Polls until the condition holds (the engine loop and commits are asynchronous), or fails after 10 s. */
    public static void eventually(String what, java.util.function.BooleanSupplier condition) {
        eventually(Duration.ofSeconds(10), what, condition);
    }

    /** Polls until the condition holds, or fails after {@code timeout}. */
    public static void eventually(Duration timeout, String what, java.util.function.BooleanSupplier condition) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (condition.getAsBoolean()) return;
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        throw new AssertionError("timed out after " + timeout.toSeconds() + " s waiting until " + what);
    }

    @Override
    public void close() {
        server.close();
    }
}
