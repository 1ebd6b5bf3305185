package io.gpupool.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.gpupool.server.api.RouteTable;
import io.gpupool.server.fuzz.AnswerCheck;
import io.gpupool.server.fuzz.FuzzCase;
import io.gpupool.server.fuzz.FuzzCase.Identity;
import io.gpupool.server.fuzz.OpenApi;
import io.gpupool.server.fuzz.RawHttp;
import io.gpupool.server.fuzz.RequestFuzzer;
import io.gpupool.server.fuzz.SchemaSampler;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

import static io.gpupool.server.TestServer.ADMIN;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The whole HTTP surface, fuzzed: every operation of the served /openapi.json (a new route is fuzzed without
 * touching this test) gets an equal share of 10,000+ seeded random requests, valid or broken in their path
 * parameters, path, query string, method, request line, Authorization and other headers, framing and body
 * (bytes over plain sockets, so nothing is refused on the client's side), sent with no token, an admin, a
 * member, an agent join token and a node credential. No answer may be 5xx or missing; every error is the JSON
 * error shape with its own status; 401/400/405/403 come where they are due; afterwards the server is healthy and
 * only the requests that were accepted changed anything.
 * <p>{@code -Dgpupool.fuzz.seed=N} replays a run (request i depends only on the seed and i, whatever the
 * threads do); {@code -Dgpupool.fuzz.requests=N} soaks longer.
 */
class FuzzTest {
    private static final long SEED = Long.getLong("gpupool.fuzz.seed", 20_261_202L);
    /** At least 10,000; the property only soaks longer. */
    private static final int REQUESTS = Math.max(10_000, Integer.getInteger("gpupool.fuzz.requests", 10_000));
    private static final int WORKERS = 16;
    private static final JsonNodeFactory F = JsonNodeFactory.instance;

    @TempDir Path dir;

    @Test
    void every_route_of_the_openapi_document_survives_ten_thousand_random_requests_without_a_5xx() throws Exception {
        try (TestServer s = TestServer.start(TestServer.options(dir))) {
            String member = s.tenantWithToken("fuzz", 1);
            s.tenantWithToken("other", 1);
            String agent = s.post("/api/v1/agent-tokens", ADMIN, Map.of()).text("token");
            String node = new TestNode(s.base, agent, "fuzz", "1xA10").register().nodeToken();
            // the node list is the pool snapshot's, refreshed every 250 ms
            TestServer.eventually("the registered node is listed", () -> names(s.get("/api/v1/nodes", ADMIN).body().path("nodes"), "name").contains("fuzz"));
            String job = s.post("/api/v1/jobs", member, Map.of("numGpus", 1, "command", List.of("x"))).text("id");
            String othersJob = s.post("/api/v1/jobs", ADMIN, Map.of("tenant", "other", "numGpus", 1, "command", List.of("y"))).text("id");
            List<String> nodes = names(s.get("/api/v1/nodes", ADMIN).body().path("nodes"), "name");

            OpenApi api = new OpenApi(s.get("/openapi.json", null).body());
            List<OpenApi.Operation> ops = api.operations();
            Set<String> served = new TreeSet<>();
            for (RouteTable.Route r : s.server.api().routes().all()) served.add(r.method() + " " + r.path());
            assertThat(ops).isNotEmpty();
            assertThat(new TreeSet<>(ops.stream().map(OpenApi.Operation::key).toList())).isEqualTo(served);

            List<Identity> identities = List.of(new Identity("no token", null, null), new Identity("admin", ADMIN, "admin"),
                    new Identity("member", member, "member"), new Identity("agent", agent, "agent"), new Identity("node", node, "node"));
            RequestFuzzer fuzzer = new RequestFuzzer(api, new SchemaSampler(api, hints(job, othersJob)), identities, (op, param) -> {
                if (op.path().startsWith("/api/v1/jobs/")) return List.of(job, othersJob);
                if (op.path().startsWith("/api/v1/tenants/")) return List.of("fuzz", "other");
                if (op.path().startsWith("/api/v1/agent/nodes/")) return List.of("fuzz");
                return nodes;
            }, "127.0.0.1");

            Books before = Books.of(s);
            RawHttp http = new RawHttp("127.0.0.1", s.server.port(), 15_000);
            Map<String, AtomicInteger> perRoute = new ConcurrentHashMap<>();
            Map<Integer, AtomicInteger> byStatus = new ConcurrentHashMap<>();
            List<String> problems = Collections.synchronizedList(new ArrayList<>());
            AtomicInteger fiveHundreds = new AtomicInteger();
            Accepted accepted = new Accepted();
            AtomicLong next = new AtomicLong();
            long t0 = System.nanoTime();
            List<Thread> workers = new ArrayList<>();
            for (int w = 0; w < WORKERS; w++) {
                workers.add(Thread.startVirtualThread(() -> {
                    for (long i = next.getAndIncrement(); i < REQUESTS; i = next.getAndIncrement()) {
                        OpenApi.Operation op = ops.get((int) (i % ops.size()));
                        // request i depends on the seed and i only, so a failure replays whatever the threads did
                        FuzzCase c = fuzzer.next(i, op, new Random(SEED * 0x9E3779B97F4A7C15L + i));
                        perRoute.computeIfAbsent(op.key(), k -> new AtomicInteger()).incrementAndGet();
                        RawHttp.Answer a;
                        try {
                            a = http.exchange(c.message().bytes(), c.head());
                        } catch (IOException e) {
                            problems.add("no answer (" + e.getMessage() + ") to " + c.describe());
                            continue;
                        }
                        byStatus.computeIfAbsent(a.status(), k -> new AtomicInteger()).incrementAndGet();
                        if (a.status() >= 500) fiveHundreds.incrementAndGet();
                        String problem = AnswerCheck.problem(c, a);
                        if (problem != null) problems.add(problem + " <- " + c.describe());
                        accepted.note(a);
                    }
                }));
            }
            for (Thread t : workers) t.join();
            long ms = (System.nanoTime() - t0) / 1_000_000;

            int least = perRoute.values().stream().mapToInt(AtomicInteger::get).min().orElse(0);
            System.out.printf("FuzzTest: seed %d, %d requests over %d routes (at least %d each) in %d ms, %d answers 5xx, statuses %s%n",
                    SEED, REQUESTS, perRoute.size(), least, ms, fiveHundreds.get(), new TreeMap<>(byStatus));
            assertThat(problems.stream().limit(25).toList()).as("%d wrong answers of %d (seed %d)", problems.size(), REQUESTS, SEED).isEmpty();
            assertThat(fiveHundreds.get()).isZero();
            assertThat(perRoute.values().stream().mapToInt(AtomicInteger::get).sum()).isEqualTo(REQUESTS);
            assertThat(perRoute.keySet()).containsExactlyInAnyOrderElementsOf(served);
            assertThat(least).isGreaterThanOrEqualTo(REQUESTS / ops.size());
            assertThat(new TreeMap<>(byStatus).keySet()).contains(200, 201, 400, 401, 403, 404, 405, 413, 415, 422);

            assertThat(s.get("/healthz", null).status()).isEqualTo(200);
            assertThat(s.get("/readyz", null).status()).isEqualTo(200);
            s.server.pool().checkConsistency().join();
            // nodes come from the pool snapshot (every 250 ms): wait until it shows the last registrations
            TestServer.eventually("the snapshot shows every registered node", () -> {
                Set<String> listed = new TreeSet<>(Books.of(s).nodes());
                Set<String> expected = new TreeSet<>(before.nodes());
                expected.addAll(accepted.nodes);
                return listed.containsAll(expected);
            });
            Books after = Books.of(s);
            // only what was accepted changed anything: no half-applied submit, tenant or registration
            assertThat(after.jobs()).as("jobs").isEqualTo(before.jobs() + accepted.jobs.get());
            Set<String> expectedTenants = new TreeSet<>(before.tenants());
            expectedTenants.addAll(accepted.tenants);
            assertThat(new TreeSet<>(after.tenants())).as("tenants").isEqualTo(expectedTenants);
            Set<String> expectedNodes = new TreeSet<>(before.nodes());
            expectedNodes.addAll(accepted.nodes);
            assertThat(new TreeSet<>(after.nodes())).as("nodes").isEqualTo(expectedNodes);
            assertThat(s.get("/api/v1/jobs/" + job, member).status()).isEqualTo(200);
            assertThat(s.get("/api/v1/whoami", node).text("role")).isEqualTo("node");
        }
    }

    /** Values the schema cannot tell: things that exist (a job, a node, a GPU model), small sane numbers. */
    private static Map<String, Function<Random, JsonNode>> hints(String job, String othersJob) {
        return Map.ofEntries(
                Map.entry("job_id", r -> F.textNode(r.nextBoolean() ? job : othersJob)),
                Map.entry("node_id", r -> F.textNode("fuzz")),
                Map.entry("tenant", r -> F.textNode(r.nextBoolean() ? "fuzz" : "other")),
                Map.entry("gpuTypes", r -> F.arrayNode().add(r.nextBoolean() ? "A100-80GB" : "T4")),
                Map.entry("numGpus", r -> F.numberNode(r.nextInt(4) == 0 ? 2 : 1)),
                Map.entry("gpusPerReplica", r -> F.numberNode(1)),
                Map.entry("gpuMilli", r -> F.numberNode(r.nextBoolean() ? 1000 : 500)),
                Map.entry("gpuMemMib", r -> F.numberNode(0)),
                Map.entry("cpuMilli", r -> F.numberNode(r.nextInt(2000))),
                Map.entry("hostMemMib", r -> F.numberNode(r.nextInt(4096))),
                Map.entry("workDir", r -> F.textNode("/tmp/fz")),
                Map.entry("model_id", r -> F.textNode("A10")),
                Map.entry("product_name", r -> F.textNode("NVIDIA A10")),
                Map.entry("index", r -> F.numberNode(0)), // GPU indices are 0..n-1 and the fuzz node has one GPU
                Map.entry("nvlink_peers", r -> F.arrayNode()),
                Map.entry("uuid", r -> F.textNode("GPU-fz-" + r.nextInt(1_000_000))),
                Map.entry("wait_ms", r -> F.numberNode(r.nextInt(3) == 0 ? r.nextInt(50) : 0)),
                Map.entry("params", r -> F.textNode(r.nextBoolean() ? "7B" : "350M")));
    }

    /** The counts that rejected requests must leave alone. */
    private record Books(int jobs, List<String> tenants, List<String> nodes) {
        static Books of(TestServer s) {
            int jobs = 0;
            String cursor = "";
            do {
                JsonNode page = s.get("/api/v1/jobs?limit=1000" + (cursor.isEmpty() ? "" : "&cursor=" + cursor), ADMIN).body();
                jobs += page.path("jobs").size();
                cursor = page.path("nextCursor").asText("");
            } while (!cursor.isEmpty() && !cursor.equals("null"));
            return new Books(jobs, names(s.get("/api/v1/tenants", ADMIN).body().path("tenants"), "name"), names(s.get("/api/v1/nodes", ADMIN).body().path("nodes"), "name"));
        }
    }

    /** What the server said it did (told by the answer's body, whichever path or method reached it). */
    private static final class Accepted {
        final AtomicInteger jobs = new AtomicInteger();
        /** Tenants an answer said exist: one created (201), or those of the configuration tree a PUT /api/v1/config applied. */
        final Set<String> tenants = ConcurrentHashMap.newKeySet();
        final Set<String> nodes = ConcurrentHashMap.newKeySet();

        void note(RawHttp.Answer a) {
            if (a.status() != 200 && a.status() != 201) return;
            String type = a.header("content-type");
            if (type == null || !type.startsWith("application/json")) return;
            JsonNode body;
            try {
                body = TestServer.JSON.readTree(a.body());
            } catch (IOException e) {
                return; // AnswerCheck reports it
            }
            if (body == null) return;
            if (a.status() == 201 && body.has("weight")) tenants.add(body.path("name").asText());
            if (a.status() == 200 && body.has("policy") && body.path("tenants").isObject()) body.path("tenants").fieldNames().forEachRemaining(tenants::add);
            if (a.status() == 201 && body.has("state") && body.has("id")) jobs.incrementAndGet();
            if (body.has("node_token")) nodes.add(body.path("node_id").asText());
        }
    }

    private static List<String> names(JsonNode array, String field) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.path(field).asText()));
        return out;
    }
}
