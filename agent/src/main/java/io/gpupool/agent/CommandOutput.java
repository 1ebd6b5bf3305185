package io.gpupool.agent;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Runs a short command to completion with a time limit and returns what it printed: the agent's tools (nvidia-smi,
 * getent, id, its own job wrapper's self-check).
 */
public record CommandOutput(int exitCode, String stdout, String stderr) {

    /** @throws IOException when it cannot be started, does not finish in time, or the wait is interrupted (the reason) */
    public static CommandOutput run(List<String> command, Duration timeout) throws IOException {
        Process p;
        try {
            p = new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
        } catch (IOException e) {
            throw new IOException("cannot run " + command.getFirst() + " (not found, or not executable): "
                    + e.getMessage().trim(), e);
        }
        // Both streams are drained while the command runs, so a chatty command never blocks on a full pipe.
        CompletableFuture<String> out = drain(p.getInputStream());
        CompletableFuture<String> err = drain(p.getErrorStream());
        try {
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                throw new IOException(String.join(" ", command) + " did not finish within " + timeout.toSeconds() + " s");
            }
            return new CommandOutput(p.exitValue(), out.get(), err.get());
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while running " + command.getFirst(), e);
        } catch (ExecutionException e) {
            throw new IOException("cannot read the output of " + command.getFirst() + ": " + e.getCause().getMessage(), e);
        }
    }

    private static CompletableFuture<String> drain(InputStream in) {
        CompletableFuture<String> f = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> {
            try (in) {
                f.complete(new String(in.readAllBytes(), StandardCharsets.UTF_8));
            } catch (IOException e) {
                f.completeExceptionally(new UncheckedIOException(e));
            }
        });
        return f;
    }

    /** The first non-blank line of stderr, else of stdout: what a failing tool says about why. */
    public String firstMessage() {
        for (String s : List.of(stderr, stdout)) {
            for (String line : s.split("\\R")) if (!line.isBlank()) return line.trim();
        }
        return "no output";
    }
}
