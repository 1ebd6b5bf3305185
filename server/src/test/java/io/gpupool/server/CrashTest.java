package io.gpupool.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gpupool.store.TestDatabases;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * kill -9 of a real server process in the middle of 10,000 submissions, then a restart on the same store:
 * every acknowledged job is there exactly once (clients retry the rest with their Idempotency-Key, and
 * 10,000 jobs exist in the end, no more), and no GPU holds more than its capacity. On the embedded SQLite
 * store and on PostgreSQL (a fresh database in the cluster of GPUPOOL_TEST_PG_URL).
 */
class CrashTest {
    private static final int TOTAL = 10_000;
    private static final int KILL_AFTER_ACKS = 3_000;
    private static final String ADMIN = "crash-admin-token-0123456789";
    private static final ObjectMapper JSON = new ObjectMapper();
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(2)).build();

    @TempDir Path dir;

    private record Server(Process process, String base) {}

    /** A server process on the store {@code db} (null: the embedded SQLite under dir/data). */
    private Server startServer(String logName, String db) throws Exception {
        Path log = dir.resolve(logName);
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-Xmx512m", "-cp", System.getProperty("java.class.path"), ServerProcessMain.class.getName()));
        if (db != null) cmd.add("--db=" + db);
        cmd.addAll(List.of(dir.resolve("data").toString(), ADMIN, "2x8:A100-80GB"));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        Pattern listening = Pattern.compile("listening on (http://127\\.0\\.0\\.1:\\d+)");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            Matcher m = listening.matcher(Files.readString(log));
            if (m.find()) return new Server(p, m.group(1));
            if (!p.isAlive()) throw new AssertionError("server exited: " + Files.readString(log));
            Thread.sleep(50);
        }
        p.destroyForcibly();
        throw new AssertionError("server did not start: " + Files.readString(log));
    }

    private HttpResponse<String> send(String base, String method, String path, String token, String body, String key) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(20)).header("Authorization", "Bearer " + token);
        if (key != null) b.header("Idempotency-Key", key);
        if (body != null) b.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(body));
        else b.method(method, HttpRequest.BodyPublishers.noBody());
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String body(int i) {
        return "{\"name\":\"crash-" + i + "\",\"numGpus\":1,\"gpuMilli\":" + (i % 3 == 0 ? 250 : 1000) + ",\"command\":[\"sleep\",\"600\"]}";
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"sqlite", "postgresql"})
    void every_acknowledged_job_survives_kill_9_exactly_once_and_no_gpu_is_over_capacity(String store) throws Exception {
        String db = store.equals("postgresql") ? TestDatabases.freshPostgresUrl() : null;
        String storeUrl = db != null ? db : TestDatabases.sqliteUrl(dir.resolve("data"));
        Server first = startServer("first.log", db);
        List<String> tokens = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            send(first.base(), "POST", "/api/v1/tenants", ADMIN, "{\"name\":\"c" + t + "\"}", null);
            tokens.add(JSON.readTree(send(first.base(), "POST", "/api/v1/tenants/c" + t + "/tokens", ADMIN, "{}", null).body()).path("token").asText());
        }
        Map<String, String> acked = new ConcurrentHashMap<>();      // key -> job id
        ConcurrentLinkedQueue<Integer> unacked = new ConcurrentLinkedQueue<>();
        AtomicInteger next = new AtomicInteger();
        AtomicInteger ackedBeforeKill = new AtomicInteger(-1);
        CountDownLatch workers = new CountDownLatch(32);
        for (int w = 0; w < 32; w++) {
            Thread.startVirtualThread(() -> {
                try {
                    int i;
                    while ((i = next.getAndIncrement()) < TOTAL) {
                        if (!submit(first.base(), tokens, i, acked)) unacked.add(i);
                        if (acked.size() >= KILL_AFTER_ACKS && ackedBeforeKill.get() < 0) {
                            synchronized (this) {
                                if (ackedBeforeKill.get() < 0) {
                                    first.process().destroyForcibly(); // SIGKILL: no shutdown hook, no final commit
                                    ackedBeforeKill.set(acked.size());
                                }
                            }
                        }
                    }
                } finally {
                    workers.countDown();
                }
            });
        }
        assertThat(workers.await(5, TimeUnit.MINUTES)).isTrue();
        first.process().waitFor(30, TimeUnit.SECONDS);
        Map<String, String> ackedFirstRun = Map.copyOf(acked);
        assertThat(ackedBeforeKill.get()).isGreaterThanOrEqualTo(KILL_AFTER_ACKS);
        assertThat(ackedFirstRun.size()).isLessThan(TOTAL);
        assertThat(unacked).isNotEmpty();

        Server second = startServer("second.log", db);
        try {
            // every job acknowledged before the crash is there, under the id that was acknowledged
            Parallel.each(List.copyOf(ackedFirstRun.entrySet()), 8, e -> {
                HttpResponse<String> r = send(second.base(), "GET", "/api/v1/jobs/" + e.getValue(), ADMIN, null, null);
                assertThat(r.statusCode()).as(e.getValue()).isEqualTo(200);
                assertThat(JSON.readTree(r.body()).path("idempotencyKey").asText()).isEqualTo(e.getKey());
            });
            PoolChecks.assertNoGpuOverCapacity(pool(second.base()), 16);
            // clients retry what was not acknowledged; nothing is created twice
            Parallel.each(List.copyOf(unacked), 8, i -> assertThat(submit(second.base(), tokens, i, acked)).as("retry " + i).isTrue());
            assertThat(acked).hasSize(TOTAL);
            for (var e : ackedFirstRun.entrySet()) assertThat(acked.get(e.getKey())).isEqualTo(e.getValue());
            assertThat(Set.copyOf(acked.values())).hasSize(TOTAL);
            try (Connection c = DriverManager.getConnection(storeUrl)) {
                ResultSet rs = c.createStatement().executeQuery("SELECT COUNT(*), COUNT(DISTINCT idem_key) FROM jobs");
                rs.next();
                assertThat(rs.getInt(1)).isEqualTo(TOTAL);
                assertThat(rs.getInt(2)).isEqualTo(TOTAL);
                PoolChecks.assertStoreWithinCapacity(c, 81_920);
                ResultSet held = c.createStatement().executeQuery("SELECT COUNT(*) FROM allocations");
                held.next();
                assertThat(held.getInt(1)).as("jobs hold GPUs after the restart").isGreaterThan(0);
                PoolChecks.assertEngineHoldsTheStoresGrants(() -> pool(second.base()), c);
            }
            PoolChecks.assertNoGpuOverCapacity(pool(second.base()), 16);
        } finally {
            second.process().destroyForcibly();
            second.process().waitFor(30, TimeUnit.SECONDS);
        }
    }

    /** True when acknowledged (201 new, 200 same job again). */
    private boolean submit(String base, List<String> tokens, int i, Map<String, String> acked) {
        try {
            HttpResponse<String> r = send(base, "POST", "/api/v1/jobs", tokens.get(i % tokens.size()), body(i), "key-" + i);
            if (r.statusCode() != 201 && r.statusCode() != 200) return false;
            String id = JSON.readTree(r.body()).path("id").asText();
            String before = acked.putIfAbsent("key-" + i, id);
            assertThat(before == null || before.equals(id)).as("key-" + i + " acknowledged as two jobs").isTrue();
            return true;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private JsonNode pool(String base) throws Exception {
        return JSON.readTree(send(base, "GET", "/api/v1/pool", ADMIN, null, null).body());
    }
}
