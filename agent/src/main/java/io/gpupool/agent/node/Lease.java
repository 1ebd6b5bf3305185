package io.gpupool.agent.node;

import java.util.function.LongSupplier;

/**
 * The agent's right to run jobs on its node, and the lease epoch it holds.
 *
 * <p>A report the server applied renews the lease until the node-lost timeout after the report was <em>sent</em>,
 * on this machine's monotonic clock ({@link System#nanoTime}: wall-clock steps do not move it). The server counts
 * the same timeout from when it <em>applied</em> the report, which is later, so this lease always runs out before
 * the server's patience does. While the lease is valid the agent may start attempts; when it runs out the agent
 * stops every job (fencing) and starts nothing until a report renews it.
 *
 * <p>The epoch says which lease generation the agent holds: the server raises a node's epoch when it declares the
 * node lost. An answer with a higher epoch than the report's renews nothing (the report was not applied); the agent
 * adopts the epoch and reports again under it.
 */
final class Lease {
    private final LongSupplier nanoClock;
    private long epoch;
    /** Valid strictly before this instant of {@link #nanoClock}; volatile so the watchdog reads it without the lock. */
    private volatile long expiresAtNanos;

    /** A lease that is not valid yet, or one inherited from the agent process before this one (see {@link #inherit}). */
    Lease(LongSupplier nanoClock) {
        this.nanoClock = nanoClock;
        this.expiresAtNanos = nanoClock.getAsLong();
    }

    /** The server applied a report (or registration) sent at {@code sentAtNanos} under {@code epoch}. */
    synchronized void renew(long sentAtNanos, long durationMs, long epoch) {
        if (epoch < this.epoch) return; // an answer from before a newer one was adopted
        if (epoch > this.epoch) this.epoch = epoch;
        long until = sentAtNanos + durationMs * 1_000_000;
        if (until - expiresAtNanos > 0) expiresAtNanos = until;
    }

    /** The server answered with a newer epoch (it declared the node lost meanwhile): adopt it, renew nothing. */
    synchronized void adoptEpoch(long epoch) {
        if (epoch > this.epoch) this.epoch = epoch;
    }

    /** Takes over what an earlier agent process on this work directory held (its lease file), if that is later. */
    synchronized void inherit(long expiresAtNanos, long epoch) {
        if (expiresAtNanos - this.expiresAtNanos > 0) this.expiresAtNanos = expiresAtNanos;
        if (epoch > this.epoch) this.epoch = epoch;
    }

    synchronized long epoch() {
        return epoch;
    }

    boolean valid() {
        return remainingNanos() > 0;
    }

    long remainingNanos() {
        return expiresAtNanos - nanoClock.getAsLong();
    }

    long expiresAtNanos() {
        return expiresAtNanos;
    }

    long now() {
        return nanoClock.getAsLong();
    }
}
