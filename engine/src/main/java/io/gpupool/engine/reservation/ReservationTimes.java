package io.gpupool.engine.reservation;

import java.time.Instant;

/** Times in reservation messages: the service's are epoch milliseconds, the simulator's count from 0. */
final class ReservationTimes {
    /** Anything before 1973 is a simulator's clock, not a date. */
    private static final long EPOCH_DATES_FROM_MS = 100_000_000_000L;

    private ReservationTimes() {}

    static String render(long ms) {
        return ms >= EPOCH_DATES_FROM_MS ? Instant.ofEpochMilli(ms).toString() : "t=" + ms / 1000.0 + "s";
    }
}
