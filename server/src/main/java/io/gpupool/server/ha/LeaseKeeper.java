package io.gpupool.server.ha;

import io.gpupool.store.ServiceLease;
import io.gpupool.store.StoreException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The active replica's side of the lease: renews it every third of its TTL on the lease's own connection. A renewal
 * that finds the epoch moved on (another replica took over) steps this replica down. One that fails (database
 * unreachable) is tried again: the replica stays active, because it cannot do harm meanwhile (every commit checks the
 * epoch) and, with the database back, either renews in time or finds it lost.
 */
public final class LeaseKeeper implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LeaseKeeper.class);
    private final ServiceLease lease;
    private final long epoch;
    private final Consumer<String> stepDown;
    private final Thread thread;
    private volatile boolean closed;

    public LeaseKeeper(ServiceLease lease, long epoch, Consumer<String> stepDown) {
        this.lease = lease;
        this.epoch = epoch;
        this.stepDown = stepDown;
        this.thread = Thread.ofPlatform().name("gpupool-lease").daemon(true).start(this::run);
    }

    private void run() {
        long period = Math.max(100, lease.ttlMs() / 3);
        while (!closed) {
            try {
                TimeUnit.MILLISECONDS.sleep(period);
            } catch (InterruptedException e) {
                return;
            }
            if (closed) return;
            try {
                if (!lease.renew(epoch)) {
                    stepDown.accept("another replica took the lease over (this one held epoch " + epoch + ")");
                    return;
                }
            } catch (StoreException e) {
                LOG.warn("cannot renew the lease (epoch {}), trying again: {}", epoch, e.getMessage());
            }
        }
    }

    /** Stops renewing and ends the lease's session: a standby takes over at its next poll. */
    @Override
    public void close() {
        closed = true;
        thread.interrupt();
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        lease.close();
    }
}
