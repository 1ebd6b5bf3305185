package io.gpupool.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gpupool.server.api.RouteTable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static io.gpupool.server.TestServer.ADMIN;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * 10,000+ malformed or random requests over every endpoint (seeded, so a failure replays): wrong methods,
 * garbage path parameters, every kind of token, broken and mutated JSON bodies, odd content types and query
 * strings, plus raw malformed HTTP. The server must never answer 5xx, and its books must still balance.
 */
class FuzzTest {
    private static final int REQUESTS = 10_000;
    private static final long SEED = 20_261_202L;
    private static final JsonNodeFactory F = JsonNodeFactory.instance;

    @TempDir Path dir;

    @Test
    void ten_thousand_malformed_or_random_requests_get_no_5xx() throws Exception {
        try (TestServer s = TestServer.start(TestServer.options(dir))) {
            String member = s.tenantWithToken("fuzz", 1);
            String agent = s.post("/api/v1/agent-tokens", ADMIN, Map.of()).text("token");
            String node = new TestNode(s.base, agent, "fuzz", "1xA10").register().nodeToken(); // reports for {name} = fuzz
            String jobId = s.post("/api/v1/jobs", member, Map.of("numGpus", 1, "command", List.of("x"))).text("id");
            String[] tokens = {ADMIN, ADMIN, member, member, agent, node, node, null, "gp_bad_token", "", "x".repeat(300)};
            List<RouteTable.Route> routes = s.server.api().routes().all();
            HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
            Map<Integer, AtomicInteger> byStatus = new ConcurrentHashMap<>();
            List<String> failures = java.util.Collections.synchronizedList(new ArrayList<>());
            AtomicInteger sent = new AtomicInteger();
            int workers = 8;
            CountDownLatch done = new CountDownLatch(workers);
            for (int w = 0; w < workers; w++) {
                Random rnd = new Random(SEED + w);
                Thread.startVirtualThread(() -> {
                    try {
                        while (sent.get() < REQUESTS) {
                            RouteTable.Route r = routes.get(rnd.nextInt(routes.size()));
                            if (r.path().equals("/api/v1/events")) continue; // a stream: covered by the raw requests below
                            HttpRequest req;
                            try {
                                req = request(rnd, s.base, r, tokens[rnd.nextInt(tokens.length)], jobId);
                            } catch (IllegalArgumentException clientRefused) {
                                continue; // the client itself will not send it (e.g. an illegal header value)
                            }
                            int n = sent.incrementAndGet();
                            try {
                                HttpResponse<String> resp = sendWithReconnect(http, req);
                                byStatus.computeIfAbsent(resp.statusCode(), k -> new AtomicInteger()).incrementAndGet();
                                if (resp.statusCode() >= 500) failures.add(resp.statusCode() + " " + req.method() + " " + clip(req.uri().toString()) + " -> " + clip(resp.body()));
                            } catch (java.io.IOException e) {
                                failures.add("no answer #" + n + " " + req.method() + " " + clip(req.uri().toString()) + ": " + e);
                            }
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } finally {
                        done.countDown();
                    }
                });
            }
            assertThat(done.await(4, TimeUnit.MINUTES)).isTrue();
            int raw = rawMalformedHttp(s, new Random(SEED), byStatus, failures);

            assertThat(sent.get() + raw).isGreaterThanOrEqualTo(REQUESTS);
            assertThat(failures.stream().limit(20).map(f -> f.length() > 400 ? f.substring(0, 400) + "..." : f).toList())
                    .as("5xx or no answer (%d in all)", failures.size()).isEmpty();
            assertThat(new TreeMap<>(byStatus).keySet()).contains(200, 400, 401, 403, 404, 422);
            s.server.pool().checkConsistency().join();
            assertThat(s.get("/healthz", null).status()).isEqualTo(200);
            assertThat(s.get("/api/v1/jobs/" + jobId, member).status()).isEqualTo(200);
        }
    }

    /**
     * A keep-alive connection the server closed (it does after an error answer sent before the body was read)
     * can be picked by the client for the next request, which then sees no bytes: the request is sent again
     * once, on a new connection. A server that failed on the request itself fails the second time too.
     */
    private static HttpResponse<String> sendWithReconnect(HttpClient http, HttpRequest req) throws java.io.IOException, InterruptedException {
        try {
            return http.send(req, HttpResponse.BodyHandlers.ofString());
        } catch (java.io.IOException e) {
            return http.send(req, HttpResponse.BodyHandlers.ofString());
        }
    }

    private static HttpRequest request(Random rnd, String base, RouteTable.Route r, String token, String jobId) {
        String path = r.path().replace("{id}", pathValue(rnd, jobId)).replace("{name}", pathValue(rnd, rnd.nextBoolean() ? "a100-80gb-0000" : "fuzz"));
        if (rnd.nextInt(4) == 0) path += "?" + query(rnd);
        String method = rnd.nextInt(8) == 0 ? pick(rnd, "GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS") : r.method().toUpperCase();
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30));
        if (token != null) b.header("Authorization", rnd.nextInt(10) == 0 ? "Basic " + token : "Bearer " + token);
        if (rnd.nextInt(5) == 0) b.header("Idempotency-Key", pick(rnd, "k" + rnd.nextInt(50), "", "x".repeat(300), "with space", "\u00e9t\u00e9"));
        String body = body(rnd, r.path(), jobId);
        if (body != null) {
            b.header("Content-Type", pick(rnd, "application/json", "application/json", "application/json", "application/json; charset=utf-8",
                    "text/plain", "application/x-www-form-urlencoded", "application/jsonx", "*/*"));
            b.method(method, HttpRequest.BodyPublishers.ofString(body));
        } else {
            b.method(method, HttpRequest.BodyPublishers.noBody());
        }
        return b.build();
    }

    private static String pathValue(Random rnd, String valid) {
        return switch (rnd.nextInt(9)) {
            case 0, 1, 2 -> valid;
            case 3 -> "j" + rnd.nextLong();
            case 4 -> enc("x".repeat(1 + rnd.nextInt(3000)));
            case 5 -> enc("../../etc/passwd");
            case 6 -> enc("\u0000\u00ff\u2603 \"'<>");
            case 7 -> "%zz%";
            default -> enc(randomText(rnd, 1 + rnd.nextInt(40)));
        };
    }

    private static String query(Random rnd) {
        StringBuilder q = new StringBuilder();
        for (int i = 0, n = 1 + rnd.nextInt(4); i < n; i++) {
            if (i > 0) q.append('&');
            q.append(pick(rnd, "limit", "cursor", "state", "tenant", "since", "until", "after", "x")).append('=')
                    .append(pick(rnd, "-1", "0", "5", "99999999999999999999", "abc", "PENDING,RUNNING", "pending", "", "%zz", enc(randomText(rnd, 8)), "fuzz"));
        }
        return q.toString();
    }

    /** A body for the route: a valid template, mutated; or something that is not JSON at all. */
    private static String body(Random rnd, String route, String jobId) {
        int kind = rnd.nextInt(10);
        if (kind == 0) return null;
        if (kind == 1) return randomText(rnd, rnd.nextInt(200));
        if (kind == 2) return "[".repeat(1 + rnd.nextInt(5000));
        ObjectNode o = template(route, jobId);
        for (int i = 0, n = rnd.nextInt(4); i < n; i++) mutate(rnd, nested(rnd, o));
        String json = o.toString();
        if (kind == 3) return json.substring(0, rnd.nextInt(json.length() + 1));
        if (kind == 4) return json + pick(rnd, "}", "garbage", ",{}", " ");
        if (kind == 5) return json.replaceFirst("\\{", "{\"numGpus\":1,");
        return json;
    }

    private static ObjectNode template(String route, String jobId) {
        ObjectNode o = F.objectNode();
        if (route.endsWith("/report")) {
            o.put("node_id", "fuzz").put("sent_at_ms", 1).put("applied_desired_version", -1).put("wait_ms", 0);
            o.putArray("gpus").addObject().put("index", 0).put("uuid", "GPU-fz").put("utilization_percent", 50).put("memory_used_mib", 10)
                    .put("memory_total_mib", 22000).put("temperature_c", 40).put("power_watts", 60.5).putArray("processes");
            o.putArray("running").addObject().put("job_id", jobId).put("attempt", 1).put("pid", 7).put("started_at_ms", 1).put("stopping", false);
            o.putArray("statuses").addObject().put("seq", 1).put("job_id", jobId).put("attempt", 1).put("phase", "RUNNING").put("pid", 7);
            o.putArray("logs").addObject().put("job_id", jobId).put("attempt", 1).put("stream", "STDOUT").put("offset", 0).put("data", "aGkK").put("complete", false);
        } else if (route.endsWith("/agent/register")) {
            o.put("node_name", "fz-node").put("agent_version", "fuzz").put("first_pending_seq", 0);
            ObjectNode inv = o.putObject("inventory").put("hostname", "fz").put("cpu_count", 4).put("memory_mib", 1000).put("backend", "fake");
            inv.putArray("gpus").addObject().put("index", 0).put("uuid", "GPU-fz-reg").put("product_name", "NVIDIA A10").put("model_id", "A10")
                    .put("memory_total_mib", 22000).putArray("nvlink_peers");
            o.putArray("running");
        } else if (route.startsWith("/api/v1/jobs")) {
            o.put("name", "fz").put("numGpus", 1).put("gpuMilli", 500).put("gpuMemMib", 1000).put("priority", 1);
            o.putArray("gpuTypes").add("A100-80GB");
            o.putArray("command").add("python").add("x.py");
            o.putObject("env").put("K", "V");
        } else if (route.contains("tenants")) {
            o.put("name", "t-fz").put("weight", 1).put("guaranteedGpus", 0).put("limitGpus", 0);
        } else if (route.contains("config")) {
            o.put("policy", "fair-share").put("placement", "binpack,topology").put("agingPerHour", 1);
        } else {
            o.put("label", "x");
        }
        return o;
    }

    /** The object itself, or (half the time, at each level) one nested in it: {@code statuses[0]}, {@code inventory.gpus[0]}. */
    private static ObjectNode nested(Random rnd, ObjectNode o) {
        while (rnd.nextBoolean()) {
            List<ObjectNode> inner = new ArrayList<>();
            o.elements().forEachRemaining(v -> {
                if (v.isObject()) inner.add((ObjectNode) v);
                if (v.isArray() && !v.isEmpty() && v.get(0).isObject()) inner.add((ObjectNode) v.get(0));
            });
            if (inner.isEmpty()) break;
            o = inner.get(rnd.nextInt(inner.size()));
        }
        return o;
    }

    private static void mutate(Random rnd, ObjectNode o) {
        List<String> names = new ArrayList<>();
        o.fieldNames().forEachRemaining(names::add);
        String f = names.isEmpty() || rnd.nextInt(6) == 0 ? pick(rnd, "unknown", "numGpus", "command", "gpus", "name", "statuses", "logs", "inventory")
                : names.get(rnd.nextInt(names.size()));
        switch (rnd.nextInt(12)) {
            case 0 -> o.remove(f);
            case 1 -> o.putNull(f);
            case 2 -> o.put(f, rnd.nextLong());
            case 3 -> o.put(f, pick(rnd, -1, 0, Integer.MAX_VALUE, Integer.MIN_VALUE));
            case 4 -> o.put(f, rnd.nextDouble() * 1e308);
            case 5 -> o.put(f, randomText(rnd, rnd.nextInt(100)));
            case 6 -> o.put(f, rnd.nextBoolean());
            case 7 -> o.putObject(f).put("nested", F.arrayNode().add(1));
            case 8 -> {
                ArrayNode a = o.putArray(f);
                for (int i = 0, n = rnd.nextInt(5); i < n; i++) a.add(rnd.nextBoolean() ? F.textNode(randomText(rnd, 5)) : F.numberNode(rnd.nextInt()));
            }
            case 9 -> o.put(f, "x".repeat(rnd.nextInt(70_000)));
            case 10 -> o.set(f, deep(rnd.nextInt(200)));
            default -> o.put(f, pick(rnd, "NaN", "1e999", "-0", "00012", "A100-80GB", "sleep"));
        }
    }

    private static JsonNode deep(int depth) {
        JsonNode n = F.numberNode(1);
        for (int i = 0; i < depth; i++) n = F.arrayNode().add(n);
        return n;
    }

    /** Raw bytes a browser or proxy would never send: the HTTP layer must answer 4xx (or close), not 5xx. */
    private static int rawMalformedHttp(TestServer s, Random rnd, Map<Integer, AtomicInteger> byStatus, List<String> failures) throws Exception {
        int port = s.server.port();
        String[] requests = {
                "GARBAGE\r\n\r\n",
                "GET /api/v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
                "POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + ADMIN + "\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\n{\"a\"",
                "POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + ADMIN + "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
                "GET /api/v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + ADMIN + "\r\nAccept: text/event-stream\r\n\r\n",
                "GET /" + "a".repeat(20_000) + " HTTP/1.1\r\nHost: x\r\n\r\n",
                "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + "b".repeat(40_000) + "\r\n\r\n",
                "GET /api/v1/jobs/%00 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + ADMIN + "\r\n\r\n",
        };
        int count = 0;
        for (int i = 0; i < 200; i++) {
            String req = requests[i % requests.length];
            try (Socket sock = new Socket("127.0.0.1", port)) {
                sock.setSoTimeout(3000);
                OutputStream out = sock.getOutputStream();
                out.write(req.getBytes(StandardCharsets.ISO_8859_1));
                out.flush();
                InputStream in = sock.getInputStream();
                byte[] head = in.readNBytes(12);
                count++;
                if (head.length < 12) continue; // closed without an answer: acceptable for garbage
                int status = Integer.parseInt(new String(head, 9, 3, StandardCharsets.ISO_8859_1));
                byStatus.computeIfAbsent(status, k -> new AtomicInteger()).incrementAndGet();
                if (status >= 500) failures.add("raw request " + (i % requests.length) + " -> " + status);
            } catch (java.net.SocketTimeoutException e) {
                count++; // the event stream stays open: expected for request 4
            }
        }
        return count;
    }

    private static String randomText(Random rnd, int len) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < len; i++) sb.append((char) (rnd.nextInt(8) == 0 ? rnd.nextInt(0x3000) : 0x20 + rnd.nextInt(95)));
        return sb.toString();
    }

    private static String clip(String s) {
        return s.length() > 200 ? s.substring(0, 200) + "..." : s;
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    @SafeVarargs
    private static <T> T pick(Random rnd, T... options) {
        return options[rnd.nextInt(options.length)];
    }
}
