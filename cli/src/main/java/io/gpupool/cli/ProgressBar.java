package io.gpupool.cli;

import java.io.PrintWriter;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * A one-line progress bar on stderr for long runs: it appears only once a run has taken more than a second,
 * redraws at most ten times a second, and erases itself when done. Silent when stderr is not a terminal
 * (a pipe, a file, CI) or when disabled ({@code --quiet}). Safe to update from several threads (one line for all).
 */
final class ProgressBar implements AutoCloseable {
    private static final long SHOW_AFTER_NS = 1_000_000_000L;
    private static final long REDRAW_NS = 100_000_000L;
    private static final int WIDTH = 30;

    private final PrintWriter err;
    private final boolean enabled;
    private final long startNs = System.nanoTime();
    private long lastDrawNs;
    private boolean drawn;

    ProgressBar(PrintWriter err, boolean enabled) {
        this.err = err;
        this.enabled = enabled && stderrIsTerminal();
    }

    /** {@code fraction} of the whole work is done; {@code label} says what is running. */
    synchronized void update(String label, double fraction) {
        if (!enabled) return;
        long now = System.nanoTime();
        if (now - startNs < SHOW_AFTER_NS || now - lastDrawNs < REDRAW_NS) return;
        lastDrawNs = now;
        double f = Math.max(0, Math.min(1, fraction));
        int filled = (int) Math.round(f * WIDTH);
        double elapsed = (now - startNs) / 1e9;
        String eta = f > 0.01 ? String.format(" ETA %ds", Math.round(elapsed * (1 - f) / f)) : "";
        err.print("\r" + "#".repeat(filled) + ".".repeat(WIDTH - filled) + String.format(" %3.0f%% %s%s", 100 * f, label, eta) + "\u001b[K");
        err.flush();
        drawn = true;
    }

    @Override
    public synchronized void close() {
        if (drawn) {
            err.print("\r\u001b[K");
            err.flush();
        }
    }

    /** isatty(2) through the C library (FFM); false where it cannot be asked. */
    static boolean stderrIsTerminal() {
        try {
            Linker linker = Linker.nativeLinker();
            var symbol = linker.defaultLookup().find("isatty");
            if (symbol.isEmpty()) return System.console() != null;
            MethodHandle isatty = linker.downcallHandle(symbol.get(), FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
            return (int) isatty.invokeExact(2) == 1;
        } catch (Throwable e) {
            return false;
        }
    }
}
