package io.gpupool.server.auth;

import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/** The token buckets on a clock the test moves: bursts of two seconds' worth, refills at the rate, one bucket per token. */
class RateLimiterTest {
    private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
    private final RateLimiter limiter = new RateLimiter(20, nanos::get);

    @Test
    void a_token_gets_a_burst_of_two_seconds_then_the_rate() {
        for (int i = 0; i < 40; i++) assertThat(limiter.tryAcquire("t1")).as("request " + i).isTrue();
        assertThat(limiter.tryAcquire("t1")).isFalse();
        nanos.addAndGet(49_000_000L); // 0.98 of a request refilled
        assertThat(limiter.tryAcquire("t1")).isFalse();
        nanos.addAndGet(2_000_000L);
        assertThat(limiter.tryAcquire("t1")).isTrue();
        assertThat(limiter.tryAcquire("t1")).isFalse();
        nanos.addAndGet(60_000_000_000L); // a long pause refills the burst, not more
        int allowed = 0;
        while (limiter.tryAcquire("t1")) allowed++;
        assertThat(allowed).isEqualTo(40);
    }

    @Test
    void each_token_has_its_own_bucket() {
        while (limiter.tryAcquire("greedy")) { }
        assertThat(limiter.tryAcquire("greedy")).isFalse();
        assertThat(limiter.tryAcquire("other")).isTrue();
    }

    @Test
    void zero_is_unlimited_and_retry_after_rounds_up_to_a_second() {
        RateLimiter none = new RateLimiter(0, nanos::get);
        for (int i = 0; i < 10_000; i++) assertThat(none.tryAcquire("t")).isTrue();
        assertThat(new RateLimiter(20, nanos::get).retryAfterSeconds()).isEqualTo(1);
        assertThat(new RateLimiter(0.25, nanos::get).retryAfterSeconds()).isEqualTo(4);
    }
}
