package io.gpupool.server.auth;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Requests per second per token: a token bucket that refills at {@code perSecond} and holds up to two
 * seconds' worth (bursts). 0 disables the limit.
 */
public final class RateLimiter {
    private final double perSecond;
    private final double capacity;
    private final LongSupplier nanoTime;
    private final Map<String, Bucket> buckets = new ConcurrentHashMap<>();

    private static final class Bucket {
        double tokens;
        long lastNanos;
    }

    public RateLimiter(double perSecond) {
        this(perSecond, System::nanoTime);
    }

    /** @param nanoTime the monotonic clock the buckets refill by (a test's own, to be exact) */
    RateLimiter(double perSecond, LongSupplier nanoTime) {
        this.perSecond = perSecond;
        this.capacity = Math.max(1, perSecond * 2);
        this.nanoTime = nanoTime;
    }

    /** Takes one request from the token's bucket; false when it is empty (answer 429). */
    public boolean tryAcquire(String tokenId) {
        if (perSecond <= 0) return true;
        Bucket b = buckets.computeIfAbsent(tokenId, k -> {
            Bucket nb = new Bucket();
            nb.tokens = capacity;
            nb.lastNanos = nanoTime.getAsLong();
            return nb;
        });
        synchronized (b) {
            long now = nanoTime.getAsLong();
            b.tokens = Math.min(capacity, b.tokens + (now - b.lastNanos) / 1e9 * perSecond);
            b.lastNanos = now;
            if (b.tokens < 1) return false;
            b.tokens -= 1;
            return true;
        }
    }

    /** Seconds until the next request would be allowed (for Retry-After). */
    public int retryAfterSeconds() {
        return perSecond <= 0 ? 0 : (int) Math.max(1, Math.ceil(1 / perSecond));
    }
}
