package io.gpupool.agent.confine;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The cgroup(s) of one attempt: one directory in every hierarchy the node uses (v2 and, on a v1 or hybrid node, each v1
 * hierarchy), made before the job starts, with its limits written; the job's wrapper joins them as its first
 * step (so everything the job forks is inside, whatever session or process group it makes); after the job they are
 * emptied (cgroup.kill, else the v1 freezer) and removed.
 *
 * <p>The directories are recorded in the job directory ({@link #RECORD}, one "HIERARCHY CONTROLLERS PATH" line each):
 * the wrapper reads it to join, and an agent that restarts while the job runs finds the groups again.
 */
public final class AttemptCgroup {

    /** The job directory's file naming the attempt's cgroup directories. */
    public static final String RECORD = "cgroups";
    /** CFS period, as runc and systemd use: a quota of cpuMilli × 100 µs per 100 ms is cpuMilli/1000 CPUs. */
    static final long CFS_PERIOD_US = 100_000;
    /** The kernel's smallest quota (1 ms). */
    static final long CFS_MIN_QUOTA_US = 1_000;

    /**
     * One directory of the attempt.
     *
     * @param hierarchy   "v2" or "v1"
     * @param controllers the controllers this directory enforces (v2: those enabled for it; v1: its hierarchy's)
     * @param path        the directory
     */
    public record Dir(String hierarchy, Set<String> controllers, Path path) {
        public Dir {
            controllers = Set.copyOf(controllers);
        }

        boolean v2() {
            return hierarchy.equals("v2");
        }

        String line() {
            return hierarchy + " " + (controllers.isEmpty() ? "-" : String.join(",", controllers.stream().sorted().toList())) + " " + path;
        }

        static Dir parse(String line) {
            String[] f = line.split(" ", 3);
            if (f.length != 3) throw new IllegalArgumentException("not a cgroup record line: " + line);
            Set<String> c = f[1].equals("-") ? Set.of() : new LinkedHashSet<>(Arrays.asList(f[1].split(",")));
            return new Dir(f[0], c, Path.of(f[2]));
        }
    }

    /**
     * What the attempt may use.
     *
     * @param cpuMilli  CPU in thousandths of a core; 0: no CPU limit (the job did not ask for host CPU)
     * @param memoryMib host memory (and no swap); 0: no memory limit
     * @param pidsMax   processes and threads at most; 0: no limit
     * @param devices   the devices it may open; null: no device filter
     * @param bpf       filter devices with a cgroup v2 BPF program as well (on the v2 directory)
     */
    public record Limits(long cpuMilli, long memoryMib, long pidsMax, List<DeviceRule> devices, boolean bpf) {
        public Limits {
            devices = devices == null ? null : List.copyOf(devices);
        }
    }

    private final List<Dir> dirs;
    private final long memoryLimitMib;

    private AttemptCgroup(List<Dir> dirs, long memoryLimitMib) {
        this.dirs = List.copyOf(dirs);
        this.memoryLimitMib = memoryLimitMib;
    }

    /**
     * Makes the directories and writes the limits. On any failure what was made is removed again and the exception
     * names the file and the kernel's errno.
     */
    public static AttemptCgroup create(List<Dir> dirs, Limits limits) throws IOException {
        AttemptCgroup cg = new AttemptCgroup(dirs, limits.memoryMib());
        List<Dir> made = new ArrayList<>();
        try {
            for (Dir d : dirs) {
                try {
                    Files.createDirectory(d.path());
                } catch (IOException e) {
                    throw new IOException("mkdir " + d.path() + ": " + Errno.describe(e), e);
                }
                made.add(d);
                cg.limit(d, limits);
            }
        } catch (IOException | RuntimeException e) {
            new AttemptCgroup(made, 0).remove();
            throw e;
        }
        return cg;
    }

    /** The groups an earlier agent process made for a job that still runs (or has just ended), from its record. */
    public static java.util.Optional<AttemptCgroup> read(Path jobDir, long memoryLimitMib) throws IOException {
        List<String> lines;
        try {
            lines = Files.readAllLines(jobDir.resolve(RECORD));
        } catch (NoSuchFileException e) {
            return java.util.Optional.empty();
        }
        List<Dir> dirs = new ArrayList<>();
        for (String l : lines) if (!l.isBlank()) dirs.add(Dir.parse(l.strip()));
        return java.util.Optional.of(new AttemptCgroup(dirs, memoryLimitMib));
    }

    /** Writes the record the wrapper joins from (write-then-rename: the wrapper never reads half of it). */
    public void writeRecord(Path jobDir) throws IOException {
        StringBuilder b = new StringBuilder();
        for (Dir d : dirs) b.append(d.line()).append('\n');
        Path tmp = jobDir.resolve(RECORD + ".tmp");
        Files.writeString(tmp, b);
        Files.move(tmp, jobDir.resolve(RECORD), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    public List<Dir> dirs() {
        return dirs;
    }

    private void limit(Dir d, Limits l) throws IOException {
        Set<String> c = d.controllers();
        if (d.v2()) {
            if (c.contains("cpu") && l.cpuMilli() > 0) write(d.path().resolve("cpu.max"), cfsQuotaUs(l.cpuMilli()) + " " + CFS_PERIOD_US);
            if (c.contains("memory") && l.memoryMib() > 0) {
                write(d.path().resolve("memory.max"), Long.toString(l.memoryMib() << 20));
                // no swap: the limit is on RAM and swap together, as Slurm's ConstrainSwapSpace with AllowedSwapSpace=0
                Path swap = d.path().resolve("memory.swap.max");
                if (Files.exists(swap)) write(swap, "0");
            }
            if (c.contains("pids") && l.pidsMax() > 0) write(d.path().resolve("pids.max"), Long.toString(l.pidsMax()));
            if (l.bpf() && l.devices() != null) {
                Bpf.attachDeviceFilter(d.path(), DeviceFilterProgram.allowOnly(l.devices()));
            }
        } else {
            if (c.contains("cpu") && l.cpuMilli() > 0) {
                write(d.path().resolve("cpu.cfs_period_us"), Long.toString(CFS_PERIOD_US));
                write(d.path().resolve("cpu.cfs_quota_us"), Long.toString(cfsQuotaUs(l.cpuMilli())));
            }
            if (c.contains("memory") && l.memoryMib() > 0) {
                String bytes = Long.toString(l.memoryMib() << 20);
                // memory first: the kernel refuses a memory+swap limit below the memory limit
                write(d.path().resolve("memory.limit_in_bytes"), bytes);
                Path memsw = d.path().resolve("memory.memsw.limit_in_bytes");
                if (Files.exists(memsw)) write(memsw, bytes);
            }
            if (c.contains("pids") && l.pidsMax() > 0) write(d.path().resolve("pids.max"), Long.toString(l.pidsMax()));
            if (c.contains("devices") && l.devices() != null) {
                write(d.path().resolve("devices.deny"), "a");
                // one rule per write: the devices controller takes one line at a time (on one open file)
                writeEach(d.path().resolve("devices.allow"), l.devices().stream().map(DeviceRule::v1Line).toList());
            }
        }
    }

    static long cfsQuotaUs(long cpuMilli) {
        return Math.max(CFS_MIN_QUOTA_US, cpuMilli * CFS_PERIOD_US / 1000);
    }

    /**
     * Kills every process in the groups: {@code cgroup.kill} where the v2 directory has it (kernel 5.14+: the kernel
     * kills them all, forks in flight included), else the v1 freezer (freeze, SIGKILL each, thaw: a frozen process
     * cannot fork meanwhile), else SIGKILL to each listed process until none is left.
     */
    public void killAll() throws IOException {
        for (Dir d : dirs) {
            Path kill = d.path().resolve("cgroup.kill");
            if (d.v2() && Files.exists(kill)) {
                write(kill, "1");
                return;
            }
        }
        for (Dir d : dirs) {
            if (!d.v2() && d.controllers().contains("freezer")) {
                freezeAndKill(d.path());
                return;
            }
        }
        for (int round = 0; round < 100 && !empty(); round++) {
            for (Dir d : dirs) for (long pid : pids(d.path())) ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        }
    }

    private static void freezeAndKill(Path dir) throws IOException {
        Path state = dir.resolve("freezer.state");
        write(state, "FROZEN");
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
            // FREEZING while tasks are still on their way to the fridge
            while (!Files.readString(state).trim().equals("FROZEN") && System.nanoTime() < deadline) Thread.sleep(1);
            for (long pid : pids(dir)) ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            write(state, "THAWED"); // SIGKILL takes effect as they thaw
        }
    }

    /** Whether no process is left in any of the groups (a group already removed counts as empty). */
    public boolean empty() {
        for (Dir d : dirs) if (!pids(d.path()).isEmpty()) return false;
        return true;
    }

    /** Waits until the groups are empty, polling, at most {@code timeoutNanos}. */
    public boolean awaitEmpty(long timeoutNanos) {
        long deadline = System.nanoTime() + timeoutNanos;
        long pauseMs = 1;
        while (!empty()) {
            if (System.nanoTime() >= deadline) return false;
            try {
                Thread.sleep(pauseMs);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
            pauseMs = Math.min(20, 2 * pauseMs);
        }
        return true;
    }

    /**
     * How many of the attempt's processes the kernel's OOM killer ended for the memory limit: {@code oom_kill} of v2's
     * memory.events or v1's memory.oom_control (kernel 4.13+). Read before {@link #remove}.
     */
    public long oomKills() {
        long kills = 0;
        for (Dir d : dirs) {
            if (!d.controllers().contains("memory")) continue;
            Path f = d.path().resolve(d.v2() ? "memory.events" : "memory.oom_control");
            try {
                for (String line : Files.readAllLines(f)) {
                    String[] kv = line.trim().split("\\s+");
                    if (kv.length == 2 && kv[0].equals("oom_kill")) kills = Math.max(kills, Long.parseLong(kv[1]));
                }
            } catch (IOException | NumberFormatException e) {
                // gone or an older kernel without the counter: no OOM kill known
            }
        }
        return kills;
    }

    /** The memory limit the attempt ran under (0: none). */
    public long memoryLimitMib() {
        return memoryLimitMib;
    }

    /**
     * Empties and removes the groups: every process still in them is killed (a daemon that left the job's session
     * too), then the groups are removed. Failures are swallowed: a process stuck in the kernel keeps its group, which
     * is empty and harmless once that process goes.
     *
     * @param waitNanos how long to wait for the killed processes to leave
     * @return how many of its processes the kernel killed for its memory limit (read before the removal)
     */
    public long release(long waitNanos) {
        try {
            killAll();
        } catch (IOException e) {
            // then the wait below fails and the removal with it
        }
        awaitEmpty(waitNanos);
        long kills = oomKills();
        try {
            remove();
        } catch (IOException e) {
            // see above: the group stays until the stuck process goes
        }
        return kills;
    }

    /**
     * Removes the directories (rmdir; a cgroup directory's files go with it). The kernel refuses (EBUSY) while a process
     * is still in one, so it tries again for up to 2 s; already removed ones are skipped.
     */
    public void remove() throws IOException {
        IOException first = null;
        for (Dir d : dirs.reversed()) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
            long pauseMs = 1;
            while (true) {
                try {
                    Files.deleteIfExists(d.path());
                    break;
                } catch (IOException e) {
                    if (System.nanoTime() >= deadline) {
                        if (first == null) first = new IOException("rmdir " + d.path() + ": " + Errno.describe(e), e);
                        break;
                    }
                }
                try {
                    Thread.sleep(pauseMs);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted while removing " + d.path(), e);
                }
                pauseMs = Math.min(50, 2 * pauseMs);
            }
        }
        if (first != null) throw first;
    }

    static List<Long> pids(Path dir) {
        try {
            List<Long> out = new ArrayList<>();
            for (String l : Files.readAllLines(dir.resolve("cgroup.procs"))) if (!l.isBlank()) out.add(Long.parseLong(l.trim()));
            return out;
        } catch (IOException | NumberFormatException e) {
            return List.of();
        }
    }

    /** One value in one write, as cgroup files expect; a refusal names the file, the value and the errno. */
    static void write(Path file, String value) throws IOException {
        writeEach(file, List.of(value));
    }

    /**
     * Each value in a write of its own, on one open of the file (created and truncated as a shell's redirection does: a
     * dry run's plain file); a refusal names the file, the value (the first, for the open) and the errno.
     */
    static void writeEach(Path file, List<String> values) throws IOException {
        FileChannel f;
        try {
            f = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING);
        } catch (IOException e) {
            throw new IOException("cannot write '" + values.getFirst() + "' to " + file + ": " + Errno.describe(e), e);
        }
        try (f) {
            for (String v : values) {
                try {
                    f.write(ByteBuffer.wrap(v.getBytes(StandardCharsets.US_ASCII)));
                } catch (IOException e) {
                    throw new IOException("cannot write '" + v + "' to " + file + ": " + Errno.describe(e), e);
                }
            }
        }
    }

    @Override
    public String toString() {
        return dirs.stream().map(Dir::path).toList().toString();
    }
}
