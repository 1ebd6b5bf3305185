package io.gpupool.server.core;

import java.util.concurrent.atomic.AtomicLong;

/** Wall-clock milliseconds that never go backwards (the engine rejects time running backwards). */
public final class ServiceClock {
    private final AtomicLong last = new AtomicLong();

    public long now() {
        long wall = System.currentTimeMillis();
        return last.accumulateAndGet(wall, Math::max);
    }
}
