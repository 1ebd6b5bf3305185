package io.gpupool.server.core;

import io.gpupool.engine.RoundResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The engine loop: one thread owns the pool ({@link PoolState}) and everything the engine decides. Callers hand in
 * commands and get futures. Each iteration runs every queued command, then (when something changed, or its timer is
 * due) one scheduling round, then hands all resulting writes to the store in one piece ({@link PendingWrites}); the
 * futures complete, and the changes go out on SSE, only after that commit. Between rounds it checks the agents' nodes
 * and takes a snapshot for the read-only views.
 */
final class EngineLoop implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(EngineLoop.class);
    private static final int MAX_COMMANDS_PER_ITERATION = 5000;
    private static final long PERIODIC_ROUND_MS = 1000;
    private static final long SNAPSHOT_INTERVAL_MS = 250;
    private static final int QUEUE_IN_SNAPSHOT = 200;
    /** Rounds after a change are at least this far apart, and at least twice the last round's duration: under a
     * flood of submissions the loop spends at most about a third of its time deciding, the rest taking work in. */
    private static final long MIN_ROUND_GAP_NANOS = 10_000_000;
    private static final long LOST_CHECK_MS = 100;

    private final PoolState pool;
    private final JobLifecycle jobs;
    private final AgentProtocol agents;
    private final ReservationAdmin reservations;
    private final GpuTelemetry telemetry;
    private final PoolHistory history = new PoolHistory();
    private final LinkedBlockingQueue<Runnable> inbox = new LinkedBlockingQueue<>();
    private final Thread thread;
    private volatile boolean running = true;
    private volatile PoolSnapshot snapshot = PoolSnapshot.empty();

    // ---- loop thread only ----
    private long nextLostCheckMs;
    private long nextPeriodicRoundMs;
    private long lastSnapshotMs;
    private long nextRoundNanos;

    /** Commits what recovery wrote, then starts the loop's thread. */
    EngineLoop(PoolState pool, JobLifecycle jobs, AgentProtocol agents, ReservationAdmin reservations, GpuTelemetry telemetry) {
        this.pool = pool;
        this.jobs = jobs;
        this.agents = agents;
        this.reservations = reservations;
        this.telemetry = telemetry;
        pool.writes.flush(pool.agents.all());
        this.thread = Thread.ofPlatform().name("gpupool-engine-loop").start(this::run);
    }

    /** Runs {@code task} on the loop thread; its future's outcome (or its exception) becomes the result. */
    <T> CompletableFuture<T> call(Supplier<CompletableFuture<T>> task) {
        CompletableFuture<T> result = new CompletableFuture<>();
        if (!running) {
            result.completeExceptionally(new ServiceException(ServiceException.Kind.UNAVAILABLE, null, "the service is shutting down"));
            return result;
        }
        inbox.add(() -> {
            try {
                task.get().whenComplete((v, e) -> {
                    if (e != null) result.completeExceptionally(e instanceof CompletionException c && c.getCause() != null ? c.getCause() : e);
                    else result.complete(v);
                });
            } catch (RuntimeException e) {
                result.completeExceptionally(e);
            }
        });
        return result;
    }

    PoolSnapshot snapshot() {
        return snapshot;
    }

    PoolHistory history() {
        return history;
    }

    boolean alive() {
        return thread.isAlive() && running;
    }

    private void run() {
        while (running || !inbox.isEmpty()) {
            try {
                long now = pool.clock.now();
                long waitMs = Math.max(1, Math.min(Math.min(nextPeriodicRoundMs, lastSnapshotMs + SNAPSHOT_INTERVAL_MS), nextLostCheckMs) - now);
                if (pool.roundDue) waitMs = Math.max(1, Math.min(waitMs, (nextRoundNanos - System.nanoTime()) / 1_000_000));
                Runnable first = inbox.poll(waitMs, TimeUnit.MILLISECONDS);
                if (first != null) {
                    first.run();
                    Runnable next;
                    for (int n = 1; n < MAX_COMMANDS_PER_ITERATION && (next = inbox.poll()) != null; n++) next.run();
                }
                now = pool.clock.now();
                if (now >= nextLostCheckMs) {
                    agents.check(now);
                    nextLostCheckMs = now + LOST_CHECK_MS;
                }
                if ((pool.roundDue && System.nanoTime() >= nextRoundNanos) || now >= nextPeriodicRoundMs) round(now);
                if (now - lastSnapshotMs >= SNAPSHOT_INTERVAL_MS) {
                    snapshot = new SnapshotBuilder(pool, telemetry).build(now, QUEUE_IN_SNAPSHOT, reservations.list());
                    history.sample(snapshot);
                    lastSnapshotMs = now;
                }
                pool.writes.flush(pool.agents.all());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            } catch (RuntimeException e) {
                // A bug in one command or round must not stop the service; what was decided is still written.
                LOG.error("engine loop iteration failed", e);
                pool.writes.flush(pool.agents.all());
            }
        }
        pool.writes.flush(pool.agents.all());
    }

    private void round(long now) {
        long t0 = System.nanoTime();
        RoundResult r = pool.engine.schedule(now);
        long nanos = System.nanoTime() - t0;
        nextRoundNanos = System.nanoTime() + Math.max(MIN_ROUND_GAP_NANOS, 2 * nanos);
        for (String id : r.preempted()) jobs.preempted(id, now);
        for (String id : r.started()) jobs.started(id, now);
        reservations.expire(now);
        pool.roundDue = false;
        long reevaluate = pool.engine.nextReevaluationMs(now).orElse(Long.MAX_VALUE);
        nextPeriodicRoundMs = Math.min(now + PERIODIC_ROUND_MS, Math.max(now + 1, reevaluate));
        pool.listener.round(nanos, r.started().size(), r.preempted().size());
    }

    /** Stops the loop after the commands already queued, and commits what they decided. */
    @Override
    public void close() {
        running = false;
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
