package io.gpupool.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * kill -9 of PostgreSQL (the postmaster, then its backends) under a server process that takes a stream of
 * submissions, at the worst moment: a commit is on disk but not yet answered. A few seconds later PostgreSQL
 * starts again on the same data directory (crash recovery). While it is down the server keeps answering:
 * /healthz, the pool view and /metrics (held in memory) 200, a job 200 or 503, /readyz 503, a submission 503
 * with Retry-After unless it is durable: never another 5xx, never a dropped connection, never longer than the
 * server's own 30 s. Once PostgreSQL is back: ready again, every job ever acknowledged is there once with its
 * spec (a retry with its Idempotency-Key gives the same job), new submissions are acknowledged, and the engine
 * holds exactly the grants the store holds.
 */
class PostgresOutageTest {
    private static final String ADMIN = "outage-admin-token-0123456789";
    private static final Duration OUTAGE = Duration.ofSeconds(4);
    /** The server answers 503 when a command has not completed in 30 s (api.Requests.await); a little slack for a busy machine. */
    private static final Duration ANSWER_WITHIN = Duration.ofSeconds(35);
    /** The store's writer notices a dead database within the pool's 2 s connection wait; from then on changes get 503 at once. */
    private static final Duration REFUSES_WITHIN = Duration.ofSeconds(10);
    private static final int SUBMISSIONS_PER_SECOND = 100;
    private static final int IN_FLIGHT = 64;
    /** Probe submissions in flight at most (see {@code Load.probe}). */
    private static final int PROBES = 1000;
    private static final ObjectMapper JSON = new ObjectMapper();
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();

    @TempDir Path dir;
    private OwnPostgres pg;
    private Process server;
    private String base;

    @AfterEach
    void stop() throws Exception {
        try {
            if (server != null) {
                server.destroyForcibly();
                server.waitFor(30, TimeUnit.SECONDS);
            }
        } finally {
            if (pg != null) pg.close();
        }
    }

    @Test
    void while_postgres_is_down_the_server_answers_or_says_503_and_after_it_is_back_no_acknowledged_job_is_lost() throws Exception {
        pg = OwnPostgres.startOrSkip();
        String db = pg.createDatabase("gpupool");
        startServer(db);
        assertThat(send("POST", "/api/v1/tenants", ADMIN, "{\"name\":\"o\"}", null).statusCode()).isEqualTo(201);
        String token = JSON.readTree(send("POST", "/api/v1/tenants/o/tokens", ADMIN, "{}", null).body()).path("token").asText();

        Load load = new Load(token);
        load.start();
        waitFor(Duration.ofSeconds(60), "300 submissions acknowledged", () -> load.acked.size() >= 300);
        String known = load.acked.values().iterator().next();

        // the crash comes while a commit is on disk but not yet answered: the writer's retry finds its rows there
        pg.holdCommitsAfterFlush();
        pg.awaitHeldCommit(Duration.ofSeconds(30));
        pg.crash();
        long down = System.nanoTime();
        List<String> wrong = new ArrayList<>();
        Map<String, Long> answers = new HashMap<>();   // "path status" -> the slowest such answer, ms
        // down for a few seconds, and at least until the server has noticed: it then refuses submissions
        while (System.nanoTime() - down < OUTAGE.toNanos() || load.unavailable.get() == 0) {
            if (System.nanoTime() - down > REFUSES_WITHIN.toNanos()) throw new AssertionError("no submission answered 503 within "
                    + REFUSES_WITHIN.toSeconds() + " s of the crash: " + answers);
            // the process, its pool view and its metrics do not need the database
            expect(answers, wrong, "/healthz", null, Set.of(200));
            expect(answers, wrong, "/api/v1/pool", token, Set.of(200));
            expect(answers, wrong, "/metrics", null, Set.of(200));
            expect(answers, wrong, "/api/v1/jobs/" + known, token, Set.of(200, 503));
            expect(answers, wrong, "/readyz", null, Set.of(503));
            load.probe();
        }
        System.out.println("answers while PostgreSQL was down (path status=slowest ms): " + answers + "; submissions answered 503: " + load.unavailable.get());
        assertThat(wrong).as("answers while PostgreSQL was down").isEmpty();

        long restart = System.nanoTime();
        pg.stopHoldingCommits();
        pg.start();
        long up = System.nanoTime();
        waitFor(Duration.ofSeconds(60), "/readyz says ready once PostgreSQL is back", () -> get("/readyz", null) == 200);
        long ready = System.nanoTime();
        int ackedWhenBack = load.acked.size();
        waitFor(Duration.ofSeconds(60), "new submissions acknowledged after the restart", () -> load.acked.size() >= ackedWhenBack + 200);
        load.stop();
        System.out.printf("PostgreSQL down %d ms, its restart (crash recovery) %d ms, the server ready %d ms after that; %d keys, %d acknowledged%n",
                (restart - down) / 1_000_000, (up - restart) / 1_000_000, (ready - up) / 1_000_000, load.next.get(), load.acked.size());
        assertThat(load.failures).as("submissions answered other than 201, 200 or 503").isEmpty();

        // clients retry what was not acknowledged, with the same key; each retry is acknowledged now, nothing twice
        Parallel.each(List.copyOf(load.unacked), 8, i -> assertThat(load.submit(i)).as("retry of key-" + i).isEqualTo(Load.Outcome.ACKED));
        assertThat(load.failures).isEmpty();
        Parallel.each(List.copyOf(load.acked.entrySet()), 8, e -> {
            int i = Integer.parseInt(e.getKey().substring("key-".length()));
            HttpResponse<String> r = send("GET", "/api/v1/jobs/" + e.getValue(), token, null, null);
            assertThat(r.statusCode()).as(e.getKey()).isEqualTo(200);
            JsonNode job = JSON.readTree(r.body());
            assertThat(job.path("idempotencyKey").asText()).isEqualTo(e.getKey());
            assertThat(job.path("name").asText()).isEqualTo("outage-" + i);
            assertThat(job.path("gpuMilli").asInt()).isEqualTo(milli(i));
            assertThat(job.path("command").toString()).isEqualTo("[\"sleep\",\"600\"]");
        });
        assertThat(Set.copyOf(load.acked.values())).as("one job per key").hasSize(load.acked.size());
        try (Connection c = DriverManager.getConnection(db)) {
            ResultSet rs = c.createStatement().executeQuery("SELECT COUNT(*), COUNT(DISTINCT idem_key) FROM jobs");
            rs.next();
            assertThat(rs.getInt(1)).as("jobs stored").isEqualTo(load.acked.size());
            assertThat(rs.getInt(2)).isEqualTo(load.acked.size());
            PoolChecks.assertStoreWithinCapacity(c, 81_920);
            PoolChecks.assertEngineHoldsTheStoresGrants(() -> JSON.readTree(send("GET", "/api/v1/pool", ADMIN, null, null).body()), c);
        }
        PoolChecks.assertNoGpuOverCapacity(JSON.readTree(send("GET", "/api/v1/pool", ADMIN, null, null).body()), 16);
    }

    /**
     * Users submitting jobs with keys key-0, key-1, ... at a steady rate until stopped, each on its own: one held
     * up (waiting for its commit while the database is down) does not hold up the next. At most
     * {@link #IN_FLIGHT} at once, so that a machine too busy to keep up slows the load instead of queueing it.
     */
    private final class Load {
        enum Outcome { ACKED, UNAVAILABLE }

        private final String token;
        private final AtomicInteger next = new AtomicInteger();
        private final AtomicBoolean stopped = new AtomicBoolean();
        private final Semaphore inFlight = new Semaphore(IN_FLIGHT);
        private Thread driver;
        final Map<String, String> acked = new ConcurrentHashMap<>();   // key -> job id
        final Queue<Integer> unacked = new ConcurrentLinkedQueue<>();
        final Queue<String> failures = new ConcurrentLinkedQueue<>();
        final AtomicInteger unavailable = new AtomicInteger();
        private final Semaphore probes = new Semaphore(PROBES);

        Load(String token) { this.token = token; }

        void start() {
            driver = Thread.ofPlatform().daemon().start(() -> {
                long period = 1_000_000_000L / SUBMISSIONS_PER_SECOND;
                long at = System.nanoTime();
                while (!stopped.get()) {
                    inFlight.acquireUninterruptibly();
                    int i = next.getAndIncrement();
                    Thread.startVirtualThread(() -> {
                        try {
                            if (submit(i) != Outcome.ACKED) unacked.add(i);
                        } finally {
                            inFlight.release();
                        }
                    });
                    at = Math.max(at + period, System.nanoTime() - period);   // no burst after a wait for a slot
                    LockSupport.parkNanos(at - System.nanoTime());
                }
            });
        }

        /**
         * One more submission outside the {@link #IN_FLIGHT} slots, on its own thread. While the database is down the
         * slots may all be held by submissions taken in before the server noticed (they wait for their commit, up to
         * 30 s): only a submission sent afterwards shows that the server now refuses changes at once. Counted and
         * retried like the others.
         */
        void probe() {
            if (!probes.tryAcquire()) return;
            int i = next.getAndIncrement();
            Thread.startVirtualThread(() -> {
                try {
                    if (submit(i) != Outcome.ACKED) unacked.add(i);
                } finally {
                    probes.release();
                }
            });
        }

        void stop() throws InterruptedException {
            stopped.set(true);
            driver.join();
            inFlight.acquire(IN_FLIGHT);   // every submission answered
            probes.acquire(PROBES);        // and every probe
        }

        Outcome submit(int i) {
            String key = "key-" + i;
            String body = "{\"name\":\"outage-" + i + "\",\"numGpus\":1,\"gpuMilli\":" + milli(i) + ",\"command\":[\"sleep\",\"600\"]}";
            long t0 = System.nanoTime();
            try {
                HttpResponse<String> r = send("POST", "/api/v1/jobs", token, body, key);
                if (r.statusCode() == 201 || r.statusCode() == 200) {
                    String id = JSON.readTree(r.body()).path("id").asText();
                    String before = acked.putIfAbsent(key, id);
                    if (before != null && !before.equals(id)) failures.add(key + " acknowledged as " + before + " and " + id);
                    return Outcome.ACKED;
                }
                String why = unavailable(r);
                if (why != null) failures.add(key + ": " + why);
                else unavailable.incrementAndGet();
            } catch (IOException e) {
                failures.add(key + ": no answer after " + (System.nanoTime() - t0) / 1_000_000 + " ms: " + e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return Outcome.UNAVAILABLE;
        }
    }

    private static int milli(int i) {
        return i % 3 == 0 ? 250 : 1000;
    }

    /** Why the answer is not a proper 503 (the JSON error shape and a Retry-After), or null when it is one. */
    private static String unavailable(HttpResponse<String> r) {
        if (r.statusCode() != 503) return "status " + r.statusCode() + ": " + r.body();
        try {
            JsonNode e = JSON.readTree(r.body());
            if (e.path("status").asInt() != 503 || !e.path("error").asText().equals("Service Unavailable") || !e.has("field")
                    || !e.has("rule") || e.path("message").asText().isEmpty()) return "503 without the error shape: " + r.body();
        } catch (IOException e) {
            return "503 without a JSON body: " + r.body();
        }
        if (r.headers().firstValue("Retry-After").isEmpty()) return "503 without Retry-After";
        return null;
    }

    private void expect(Map<String, Long> answers, List<String> wrong, String path, String token, Set<Integer> allowed) {
        long t0 = System.nanoTime();
        try {
            HttpResponse<String> r = send("GET", path, token, null, null);
            answers.merge(path + " " + r.statusCode(), (System.nanoTime() - t0) / 1_000_000, Math::max);
            if (!allowed.contains(r.statusCode())) wrong.add(path + ": " + r.statusCode() + " " + r.body());
            else if (r.statusCode() == 503 && !path.equals("/readyz") && unavailable(r) != null) wrong.add(path + ": " + unavailable(r));
        } catch (IOException e) {
            wrong.add(path + ": no answer after " + (System.nanoTime() - t0) / 1_000_000 + " ms: " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            wrong.add(path + ": interrupted");
        }
    }

    private int get(String path, String token) {
        try {
            return send("GET", path, token, null, null).statusCode();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    private HttpResponse<String> send(String method, String path, String token, String body, String key) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(ANSWER_WITHIN);
        if (token != null) b.header("Authorization", "Bearer " + token);
        if (key != null) b.header("Idempotency-Key", key);
        if (body != null) b.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(body));
        else b.method(method, HttpRequest.BodyPublishers.noBody());
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private void startServer(String db) throws Exception {
        Path log = dir.resolve("server.log");
        server = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-Xmx512m", "-Dorg.slf4j.simpleLogger.showDateTime=true",
                "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS", "-cp", System.getProperty("java.class.path"),
                ServerProcessMain.class.getName(), "--db=" + db, dir.resolve("data").toString(), ADMIN, "2x8:A100-80GB")
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        Pattern listening = Pattern.compile("listening on (http://127\\.0\\.0\\.1:\\d+)");
        waitFor(Duration.ofSeconds(60), "the server listens", () -> {
            if (!server.isAlive()) throw new AssertionError("server exited: " + read(log));
            Matcher m = listening.matcher(read(log));
            if (!m.find()) return false;
            base = m.group(1);
            return true;
        });
    }

    /** The server log's last 20 lines that are not stack frames. */
    private String serverLogTail() {
        List<String> lines = read(dir.resolve("server.log")).lines().filter(l -> !l.startsWith("\tat ") && !l.startsWith("\t...")).toList();
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
    }

    private static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (IOException e) {
            return "";
        }
    }

    private void waitFor(Duration limit, String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + limit.toSeconds() + " s waiting until " + what + "; the server's log ends:\n" + serverLogTail());
            }
            Thread.sleep(50);
        }
    }
}
