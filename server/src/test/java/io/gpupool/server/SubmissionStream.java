package io.gpupool.server;

import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A steady stream of job submissions to a replicated service, as a client with several server URLs sends them: each has
 * its own Idempotency-Key, and one that cannot connect or meets a standby (503 naming the active replica) is sent again,
 * with the same key, to the other replica until it is acknowledged (201, or 200 for a key the store already holds).
 * Records every acknowledgment: the key, the job's id, when and through which replica.
 */
final class SubmissionStream implements AutoCloseable {
    record Ack(String key, String id, long atNanos, String server) {}

    private static final ObjectMapper JSON = new ObjectMapper();
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(2)).build();
    private final List<String> servers;
    private final String token;
    private final String prefix;
    private final String body;
    private final AtomicReference<String> current;
    private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
    final Map<String, Ack> acked = new ConcurrentHashMap<>();
    final Map<String, String> failed = new ConcurrentHashMap<>();
    private final AtomicInteger sent = new AtomicInteger();
    private volatile boolean stopped;
    private Thread pacer;

    /** {@code command}: what each job runs (one GPU). */
    SubmissionStream(List<String> servers, String token, String prefix, List<String> command) throws IOException {
        this.servers = List.copyOf(servers);
        this.token = token;
        this.prefix = prefix;
        this.current = new AtomicReference<>(servers.getFirst());
        this.body = JSON.writeValueAsString(Map.of("numGpus", 1, "gpuMilli", 100, "command", command, "restartPolicy", "requeue"));
    }

    /** Starts submitting {@code perSecond} jobs a second until {@link #stop}. */
    SubmissionStream start(int perSecond) {
        long periodNanos = TimeUnit.SECONDS.toNanos(1) / perSecond;
        pacer = Thread.ofPlatform().name("submission-pacer").daemon(true).start(() -> {
            long next = System.nanoTime();
            while (!stopped) {
                int n = sent.getAndIncrement();
                threads.submit(() -> submit(prefix + n));
                next += periodNanos;
                long wait = next - System.nanoTime();
                if (wait > 0) java.util.concurrent.locks.LockSupport.parkNanos(wait);
            }
        });
        return this;
    }

    int sent() { return sent.get(); }

    /** Stops sending and waits (up to a minute) until every submission sent is acknowledged or has given up. */
    void stop() throws InterruptedException {
        stopped = true;
        if (pacer != null) pacer.join();
        threads.shutdown();
        if (!threads.awaitTermination(90, TimeUnit.SECONDS)) throw new AssertionError("submissions still open after 90 s");
    }

    private void submit(String key) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        String last = "";
        while (System.nanoTime() < deadline) {
            String at = current.get();
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(at + "/api/v1/jobs")).timeout(Duration.ofSeconds(30))
                        .header("Authorization", "Bearer " + token).header("Idempotency-Key", key).header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 201 || r.statusCode() == 200) {
                    acked.put(key, new Ack(key, JSON.readTree(r.body()).path("id").asText(), System.nanoTime(), at));
                    return;
                }
                last = "HTTP " + r.statusCode() + " " + r.body();
                if (r.statusCode() < 500) break;   // the service refused it: a failure the test reports; 5xx: tried again, same key
                String active = r.headers().firstValue("X-Gpupool-Active").orElse("");
                if (servers.contains(active)) current.compareAndSet(at, active);
                else if (r.headers().firstValue("X-Gpupool-Active").isPresent()) current.compareAndSet(at, other(at));
            } catch (IOException e) {
                last = e.toString();
                current.compareAndSet(at, other(at));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        failed.put(key, last);
    }

    private String other(String at) {
        int i = servers.indexOf(at);
        return servers.get((i + 1) % servers.size());
    }

    @Override
    public void close() throws InterruptedException {
        if (!stopped) stop();
    }
}
