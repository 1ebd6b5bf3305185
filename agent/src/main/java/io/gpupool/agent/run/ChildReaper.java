package io.gpupool.agent.run;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Reaps the processes the agent spawned itself ({@link PosixSpawn}): they are no {@link Process} objects, so the JDK's
 * reaper does not know them. As the JDK does for its own children, one small daemon thread per running child blocks in
 * {@code waitpid(pid)} (a cached pool: a burst of short jobs reuses them). It waits for that pid only, never for any
 * child, so the JDK's children (getent, nvidia-smi, the fence keeper) stay the JDK's to reap.
 */
final class ChildReaper {

    private static final AtomicInteger THREAD_NUMBER = new AtomicInteger();
    /** Platform threads: a virtual thread blocked in a native call would hold its carrier all the while. */
    private static final ExecutorService THREADS = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(null, r, "gpupool-reaper-" + THREAD_NUMBER.incrementAndGet(), 256 * 1024);
        t.setDaemon(true);
        return t;
    });

    private ChildReaper() {
    }

    /**
     * Completes once child {@code pid} has ended and been reaped, with its exit value: the exit code, or 128 + the
     * signal that killed it (as a shell reports it, and {@link Process#exitValue} does); with null when it was no
     * child of this process (nothing to reap).
     */
    static CompletableFuture<Integer> exitOf(long pid) {
        CompletableFuture<Integer> exit = new CompletableFuture<>();
        THREADS.execute(() -> exit.complete(PosixSpawn.waitFor(pid).map(ChildReaper::exitValue).orElse(null)));
        return exit;
    }

    /** waitpid's status as an exit value (WIFSIGNALED: 128 + WTERMSIG, else WEXITSTATUS). */
    static int exitValue(int status) {
        int signal = status & 0x7f;
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal;
    }
}
