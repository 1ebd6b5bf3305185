package io.gpupool.agent.run;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.invoke.MethodHandle;
import java.util.Optional;

import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * Sends signals to processes and process groups through libc's {@code kill(2)} (via FFM): the JDK can
 * only signal single processes, and a job is a process group (it is started under {@code setsid}), so
 * stopping it must reach every process the job forked, including those whose parent already exited.
 */
final class ProcessSignals {

    static final int SIGKILL = 9;
    static final int SIGTERM = 15;

    private static final MethodHandle KILL = Linker.nativeLinker().defaultLookup().find("kill")
            .map(s -> Linker.nativeLinker().downcallHandle(s, FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT)))
            .orElse(null);

    private ProcessSignals() {
    }

    /** Signals every process of group {@code pgid}; false when the group no longer exists (or libc is unavailable). */
    static boolean signalGroup(long pgid, int signal) {
        return kill(-Math.toIntExact(pgid), signal);
    }

    /** Signals one process; falls back to the JDK's destroy for TERM/KILL where libc is unavailable. */
    static boolean signalProcess(long pid, int signal) {
        if (KILL != null) return kill(Math.toIntExact(pid), signal);
        Optional<ProcessHandle> h = ProcessHandle.of(pid);
        if (h.isEmpty()) return false;
        return signal == SIGKILL ? h.get().destroyForcibly() : h.get().destroy();
    }

    /**
     * Waits (at most {@code waitNanos}) until no live process of group {@code pgid} is left: SIGKILL takes effect
     * only when a process leaves the kernel (e.g. a GPU driver call).
     */
    static void awaitGroupGone(long pgid, long waitNanos) {
        long deadline = System.nanoTime() + waitNanos;
        long pauseMs = 1;
        // kill(-pgid, 0) answers in one call in the usual case (nothing left); only a group that still exists is looked up in /proc
        while (signalGroup(pgid, 0) && ProcFs.groupHasLiveMember(pgid) && System.nanoTime() < deadline) {
            try {
                Thread.sleep(pauseMs);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            pauseMs = Math.min(50, 2 * pauseMs);
        }
    }

    private static boolean kill(int target, int signal) {
        if (KILL == null) return false;
        try {
            return (int) KILL.invokeExact(target, signal) == 0;
        } catch (Throwable t) {
            return false;
        }
    }
}
