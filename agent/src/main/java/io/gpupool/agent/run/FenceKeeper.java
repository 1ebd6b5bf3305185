package io.gpupool.agent.run;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The agent's side of the fence keeper ({@code fence-keeper.sh}): a small shell process in a session of its own
 * that stops the node's jobs when the agent's lease runs out, even if the agent itself is dead (kill -9, a crash)
 * or paused (a long GC, SIGSTOP). The agent's own watchdog does the same while it runs; the keeper is what makes
 * the guarantee hold without it.
 *
 * <p>The lease file holds the deadline on the clock of {@code /proc/uptime} (CLOCK_BOOTTIME: monotonic, readable
 * from a shell without a process), converted from the agent's {@link System#nanoTime} when written. A new agent
 * process on the same work directory inherits the deadline from it ({@link #inheritedExpiry}).
 */
public final class FenceKeeper {
    static final String LEASE = "lease";
    static final String PID = "keeper.pid";
    /** Written by the keeper into a job directory when it stopped that job. */
    public static final String FENCED = "fenced";
    private static final String NAME = "gpupool-keeper";
    private static final Path UPTIME = Path.of("/proc/uptime");
    private static final String SCRIPT = script();

    private final Path workDir;
    private final long graceCs;
    private boolean written;
    private long writtenDeadlineCs;
    private ProcessHandle keeper;

    public FenceKeeper(Path workDir, Duration killGrace) {
        this.workDir = workDir;
        this.graceCs = Math.max(0, (killGrace.toMillis() + 9) / 10);
    }

    /** Whether this machine has what the keeper needs (Linux's /proc/uptime, a POSIX shell). */
    public static boolean supported() {
        return Files.isReadable(UPTIME) && Files.isExecutable(Path.of("/bin/sh"));
    }

    /**
     * The lease now runs out at {@code expiresAtNanos} ({@link System#nanoTime}): the lease file says so (rewritten
     * only when the deadline moves by a tenth of a second or more), and a keeper runs.
     */
    public synchronized void renew(long expiresAtNanos) throws IOException {
        long nowNanos = System.nanoTime();
        long uptimeCs = uptimeCs();
        // rounded down: the keeper may act a little early, never late
        long deadlineCs = uptimeCs + Math.floorDiv(expiresAtNanos - nowNanos, 10_000_000L);
        if (!written || deadlineCs - writtenDeadlineCs >= 10 || deadlineCs < writtenDeadlineCs) {
            Path tmp = workDir.resolve(LEASE + ".tmp");
            Files.writeString(tmp, deadlineCs + " " + graceCs + "\n");
            Files.move(tmp, workDir.resolve(LEASE), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            writtenDeadlineCs = deadlineCs;
            written = true;
        }
        ensureRunning();
    }

    /**
     * The deadline that an earlier agent process on this work directory left in the lease file, as an instant of
     * {@link System#nanoTime}; empty when there is none.
     */
    public static OptionalLong inheritedExpiry(Path workDir) {
        try {
            String[] f = Files.readString(workDir.resolve(LEASE)).trim().split("\\s+");
            long deadlineCs = Long.parseLong(f[0]);
            long nowNanos = System.nanoTime();
            return OptionalLong.of(nowNanos + (deadlineCs - uptimeCs()) * 10_000_000L);
        } catch (NoSuchFileException e) {
            return OptionalLong.empty();
        } catch (IOException | RuntimeException e) {
            return OptionalLong.empty(); // unreadable: no lease, so re-adopted jobs are fenced unless the server answers
        }
    }

    /** The keeper process for this work directory, if one runs. */
    public synchronized Optional<ProcessHandle> process() {
        if (keeper != null && keeper.isAlive()) return Optional.of(keeper);
        try {
            long pid = Long.parseLong(Files.readString(workDir.resolve(PID)).trim());
            keeper = ProcessHandle.of(pid).filter(this::isOurs).orElse(null);
        } catch (IOException | NumberFormatException e) {
            keeper = null;
        }
        return Optional.ofNullable(keeper);
    }

    private void ensureRunning() throws IOException {
        if (process().isPresent()) return;
        Process p = new ProcessBuilder(command())
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.appendTo(workDir.resolve("keeper.log").toFile()))
                .start();
        keeper = p.toHandle();
        Path tmp = workDir.resolve(PID + ".tmp");
        Files.writeString(tmp, p.pid() + "\n");
        Files.move(tmp, workDir.resolve(PID), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    private List<String> command() {
        List<String> setsid = Arrays.stream(new String[] {"/usr/bin/setsid", "/bin/setsid"}).filter(p -> Files.isExecutable(Path.of(p))).toList();
        List<String> sh = List.of("/bin/sh", "-c", SCRIPT, NAME, workDir.toString());
        return setsid.isEmpty() ? sh : java.util.stream.Stream.concat(setsid.stream().limit(1), sh.stream()).toList();
    }

    private boolean isOurs(ProcessHandle h) {
        return h.isAlive() && h.info().arguments().map(a -> Arrays.asList(a).contains(NAME) && Arrays.asList(a).contains(workDir.toString()))
                .orElse(false);
    }

    private static long uptimeCs() throws IOException {
        String s = Files.readString(UPTIME).trim();
        return new BigDecimal(s.substring(0, s.indexOf(' '))).movePointRight(2).longValue();
    }

    private static String script() {
        try (InputStream in = FenceKeeper.class.getResourceAsStream("fence-keeper.sh")) {
            if (in == null) throw new IllegalStateException("fence-keeper.sh is missing from the agent's jar");
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
