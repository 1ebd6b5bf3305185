package io.gpupool.sim;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs one replay per policy on up to {@code threads} threads and returns the results in the order the
 * policies were given, so the output does not depend on which replay finished first.
 *
 * <p>Each replay must own its state (its {@link Simulator}, scheduler, predictor, recorder, trace cursor): the
 * runner shares nothing between them but the progress listener, which it calls under its own lock. With one
 * thread the replays run one after the other in the calling thread, as before.
 *
 * <p>When a replay fails, the replays still running stop at their next progress report and the failure
 * is thrown as a {@link PolicyRunException} naming the policy (the first failed one in the given order).
 */
public final class PolicyRuns {
    /** One replay: it reports progress through the {@link Simulator.Progress} it is given. */
    @FunctionalInterface
    public interface Replay<T> {
        T run(int index, Simulator.Progress progress);
    }

    /** Progress of the whole comparison: what is running, and the fraction of all replays done. */
    @FunctionalInterface
    public interface Listener {
        void update(String running, double fraction);
    }

    /** Thrown by a replay's progress report once another replay failed: it ends the replay early. */
    private static final class Stopped extends CancellationException {
        Stopped() { super("stopped: another policy's replay failed"); }
    }

    private final List<String> policies;
    private final int threads;
    private final Listener listener;
    private final double[] done;
    private final boolean[] running;
    private volatile boolean failed;

    private PolicyRuns(List<String> policies, int threads, Listener listener) {
        if (threads < 1) throw new IllegalArgumentException("threads must be >= 1, got " + threads);
        this.policies = List.copyOf(policies);
        this.threads = Math.min(threads, Math.max(1, policies.size()));
        this.listener = listener;
        this.done = new double[policies.size()];
        this.running = new boolean[policies.size()];
    }

    /** Runs {@code replay} for each of {@code policies} (by index) on up to {@code threads} threads. */
    public static <T> List<T> run(List<String> policies, int threads, Listener listener, Replay<T> replay) {
        return new PolicyRuns(policies, threads, listener).runAll(replay);
    }

    private <T> List<T> runAll(Replay<T> replay) {
        if (threads == 1) {
            List<T> results = new ArrayList<>();
            for (int i = 0; i < policies.size(); i++) results.add(runOne(i, replay));
            return results;
        }
        ExecutorService pool = Executors.newFixedThreadPool(threads, namedDaemons());
        try {
            List<Future<T>> futures = new ArrayList<>();
            for (int i = 0; i < policies.size(); i++) {
                int index = i;
                futures.add(pool.submit(() -> runOne(index, replay)));
            }
            List<T> results = new ArrayList<>();
            PolicyRunException first = null;
            for (Future<T> f : futures) {
                try {
                    results.add(f.get());
                } catch (ExecutionException e) {
                    if (first == null && e.getCause() instanceof PolicyRunException p) first = p;
                    else if (first == null && !(e.getCause() instanceof Stopped)) throw new IllegalStateException(e.getCause());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    failed = true;
                    throw new CancellationException("interrupted while waiting for the replays");
                }
            }
            if (first != null) throw first;
            return results;
        } finally {
            pool.shutdownNow();
        }
    }

    private <T> T runOne(int index, Replay<T> replay) {
        if (failed) throw new Stopped();
        report(index, 0, true);
        try {
            T result = replay.run(index, (jobsDone, jobsTotal) -> {
                if (failed) throw new Stopped();
                report(index, jobsTotal == 0 ? 1 : (double) jobsDone / jobsTotal, true);
            });
            report(index, 1, false);
            return result;
        } catch (Stopped e) {
            throw e;
        } catch (RuntimeException | Error e) {
            failed = true;
            throw new PolicyRunException(policies.get(index), e);
        }
    }

    private synchronized void report(int index, double fraction, boolean isRunning) {
        done[index] = fraction;
        running[index] = isRunning;
        List<String> now = new ArrayList<>();
        int finished = 0;
        for (int i = 0; i < running.length; i++) {
            if (running[i]) now.add(policies.get(i));
            else if (done[i] >= 1) finished++;
        }
        String label = policies.size() == 1 ? policies.getFirst()
                : String.join(",", now) + " (" + finished + "/" + policies.size() + " done)";
        listener.update(label, Arrays.stream(done).sum() / done.length);
    }

    private static ThreadFactory namedDaemons() {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, "simulate-" + n.incrementAndGet());
            t.setDaemon(true);   // a failed comparison must not keep the JVM alive for the replays it stopped
            return t;
        };
    }
}
