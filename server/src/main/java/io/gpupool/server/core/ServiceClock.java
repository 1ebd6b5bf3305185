package io.gpupool.server.core;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Wall-clock milliseconds that never go backwards (the engine rejects time running backwards), for what is recorded
 * and shown; and the monotonic clock, for what is measured (how long an agent has been silent).
 */
public final class ServiceClock {
    private final AtomicLong last = new AtomicLong();

    public long now() {
        long wall = System.currentTimeMillis();
        return last.accumulateAndGet(wall, Math::max);
    }

    /** Monotonic nanoseconds ({@link System#nanoTime}): a step of the wall clock does not move it. */
    public long nanos() {
        return System.nanoTime();
    }
}
