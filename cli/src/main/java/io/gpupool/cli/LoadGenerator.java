package io.gpupool.cli;

import io.gpupool.agent.tls.ServerTrust;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Open-loop load on POST /api/v1/jobs: submissions are sent at a fixed rate whatever the server's speed,
 * and each latency is measured from the moment the request was due, not when it could be sent (no
 * coordinated omission). Every submission carries a unique Idempotency-Key. Used by {@code gpupool
 * loadgen} (docs/benchmarks.md). Requests go over a pool of keep-alive connections
 * ({@link KeepAliveConnection}) rather than the JDK's HttpClient, which spends about as much CPU per request
 * as the server does: on a 2-core machine the bench would measure its own client.
 *
 * @param trust       which certificates an https:// server may show
 * @param tokens      member tokens; request i uses tokens[i % n] (spreads load over tenants and rate limits)
 * @param maxInFlight most requests outstanding at once (the client's connection budget)
 */
public record LoadGenerator(URI server, ServerTrust trust, List<String> tokens, double ratePerSec, int total, int maxInFlight, String keyPrefix) {

    /**
     * What happened. Latencies in microseconds; {@code byStatus} counts answers by HTTP status (0 = no answer);
     * {@code perSecondP99Us[s]} is the p99 of the requests due in second s of the run (where in the run the tail
     * is: one stall, a periodic one, or spread out).
     */
    public record Result(int sent, long acked, Map<Integer, Long> byStatus, double seconds, long p50Us, long p95Us, long p99Us, long maxUs,
                         long[] perSecondP99Us) {
        public double ackedPerSec() { return acked / seconds; }
    }

    public Result run() throws InterruptedException {
        ConcurrentLinkedDeque<KeepAliveConnection> idle = new ConcurrentLinkedDeque<>();
        try {
            return run(idle);
        } finally {
            idle.forEach(KeepAliveConnection::close);
        }
    }

    /**
     * The same, taking connections from and returning them to {@code idle}, which the caller closes: a measured
     * run after a warm-up starts with the warm-up's connections, as a long-running client's pool would,
     * instead of opening hundreds at once in its first second.
     */
    Result run(ConcurrentLinkedDeque<KeepAliveConnection> idle) throws InterruptedException {
        long[] latencyUs = new long[total];
        Arrays.fill(latencyUs, -1);
        Map<Integer, Long> byStatus = new ConcurrentHashMap<>();
        AtomicLong acked = new AtomicLong();
        Semaphore inFlight = new Semaphore(maxInFlight);
        CountDownLatch done = new CountDownLatch(total);
        long periodNanos = (long) (1e9 / ratePerSec);
        long t0 = System.nanoTime();
        for (int i = 0; i < total; i++) {
            long due = t0 + i * periodNanos;
            long wait;
            while ((wait = due - System.nanoTime()) > 0) LockSupport.parkNanos(wait);
            inFlight.acquire();
            int n = i;
            Thread.startVirtualThread(() -> {
                try {
                    String key = keyPrefix + n;
                    int status = 0;
                    KeepAliveConnection c = idle.pollFirst();
                    boolean reused = c != null;
                    String token = tokens.get(n % tokens.size());
                    byte[] json = body(n);
                    try {
                        if (c == null) c = new KeepAliveConnection(server, trust);
                        KeepAliveConnection.Response r;
                        try {
                            r = c.post("/api/v1/jobs", token, key, json);
                        } catch (IOException stale) {
                            if (!reused) throw stale;
                            // the server closed the idle connection: once more on a new one (the key makes it safe)
                            c.close();
                            c = new KeepAliveConnection(server, trust);
                            r = c.post("/api/v1/jobs", token, key, json);
                        }
                        status = r.status();
                        if (status == 201 || status == 200) acked.incrementAndGet();
                        if (r.keepAlive()) idle.addFirst(c);
                        else c.close();
                    } catch (IOException e) {
                        status = 0;
                        if (c != null) c.close();
                    }
                    latencyUs[n] = (System.nanoTime() - due) / 1000;
                    byStatus.merge(status, 1L, Long::sum);
                } finally {
                    inFlight.release();
                    done.countDown();
                }
            });
        }
        done.await(10, TimeUnit.MINUTES);
        double seconds = (System.nanoTime() - t0) / 1e9;
        long[] lat = Arrays.stream(latencyUs).filter(x -> x >= 0).sorted().toArray();
        return new Result(total, acked.get(), new TreeMap<>(byStatus), seconds, pct(lat, 0.50), pct(lat, 0.95), pct(lat, 0.99),
                lat.length == 0 ? 0 : lat[lat.length - 1], perSecondP99(latencyUs, periodNanos));
    }

    /** p99 of each second's requests, by the second they were due in (request i was due at i periods). */
    private static long[] perSecondP99(long[] latencyUs, long periodNanos) {
        int perSecond = (int) Math.max(1, 1_000_000_000L / periodNanos);
        long[] p99 = new long[(latencyUs.length + perSecond - 1) / perSecond];
        for (int s = 0; s < p99.length; s++) {
            long[] second = Arrays.stream(latencyUs, s * perSecond, Math.min(latencyUs.length, (s + 1) * perSecond))
                    .filter(x -> x >= 0).sorted().toArray();
            p99[s] = pct(second, 0.99);
        }
        return p99;
    }

    private static byte[] body(int n) {
        return ("{\"name\":\"load-" + n + "\",\"numGpus\":1,\"gpuMilli\":" + (n % 4 == 0 ? 250 : 1000)
                + ",\"priority\":" + (n % 3) + ",\"command\":[\"sleep\",\"" + (60 + n % 240) + "\"]}").getBytes(StandardCharsets.UTF_8);
    }

    private static long pct(long[] sorted, double q) {
        if (sorted.length == 0) return 0;
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(q * sorted.length) - 1)];
    }
}
