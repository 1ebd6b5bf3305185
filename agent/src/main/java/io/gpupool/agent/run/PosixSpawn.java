package io.gpupool.agent.run;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * glibc's {@code posix_spawn} through FFM: one clone (CLONE_VM|CLONE_VFORK) and one exec, with no helper process in
 * between (the JDK's ProcessBuilder execs its {@code jspawnhelper} first, and a new session needed {@code setsid} on
 * top). The child becomes the leader of a new session ({@code POSIX_SPAWN_SETSID}, glibc 2.26), starts with no signal
 * blocked and every signal at its default (a JVM thread's mask must not reach a job: a blocked SIGTERM would make it
 * unstoppable), gets its standard streams from files, enters its directory, and inherits no other descriptor of the
 * agent ({@code posix_spawn_file_actions_addclosefrom_np}, glibc 2.34: the JDK opens most files without
 * O_CLOEXEC). Also {@code waitpid}, for {@link ChildReaper}.
 *
 * <p>glibc reports a failed exec or file action as posix_spawn's result (it waits for the child's exec), so a spawn
 * that returned a pid runs the program.
 */
final class PosixSpawn {

    private static final int POSIX_SPAWN_SETSIGDEF = 0x04;
    private static final int POSIX_SPAWN_SETSIGMASK = 0x08;
    private static final int POSIX_SPAWN_SETSID = 0x80;
    private static final int O_RDONLY = 0, O_WRONLY = 1, O_CREAT = 0100, O_APPEND = 02000;
    /** Larger than glibc's posix_spawnattr_t (336 bytes), posix_spawn_file_actions_t (80) and sigset_t (128) on 64-bit Linux. */
    private static final long ATTR_BYTES = 512, ACTIONS_BYTES = 256, SIGSET_BYTES = 256;
    private static final int EINTR = 4;

    private static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));

    private static final int O_CLOEXEC = 02000000, EPIPE = 32;
    private static final MethodHandle SPAWN, ACTIONS_INIT, ACTIONS_DESTROY, ADD_OPEN, ADD_DUP2, ADD_CHDIR, ADD_CLOSEFROM,
            ATTR_INIT, ATTR_DESTROY, SET_FLAGS, SET_SIGMASK, SET_SIGDEFAULT, SIGEMPTYSET, SIGFILLSET, WAITPID, STRERROR,
            PIPE2, WRITE, CLOSE;
    /** Why this JVM cannot spawn this way; null when it can. */
    private static final String UNAVAILABLE;

    static {
        Linker linker = Linker.nativeLinker();
        SymbolLookup libc = linker.defaultLookup();
        List<String> missing = new ArrayList<>();
        // int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *, const posix_spawnattr_t *, char *const argv[], char *const envp[])
        SPAWN = find(libc, missing, "posix_spawn", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS));
        ACTIONS_INIT = find(libc, missing, "posix_spawn_file_actions_init", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        ACTIONS_DESTROY = find(libc, missing, "posix_spawn_file_actions_destroy", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        ADD_OPEN = find(libc, missing, "posix_spawn_file_actions_addopen",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT));
        ADD_DUP2 = find(libc, missing, "posix_spawn_file_actions_adddup2", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT));
        ADD_CHDIR = find(libc, missing, "posix_spawn_file_actions_addchdir_np", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        ADD_CLOSEFROM = find(libc, missing, "posix_spawn_file_actions_addclosefrom_np", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        ATTR_INIT = find(libc, missing, "posix_spawnattr_init", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        ATTR_DESTROY = find(libc, missing, "posix_spawnattr_destroy", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        SET_FLAGS = find(libc, missing, "posix_spawnattr_setflags", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_SHORT));
        SET_SIGMASK = find(libc, missing, "posix_spawnattr_setsigmask", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        SET_SIGDEFAULT = find(libc, missing, "posix_spawnattr_setsigdefault", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        SIGEMPTYSET = find(libc, missing, "sigemptyset", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        SIGFILLSET = find(libc, missing, "sigfillset", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        // pid_t waitpid(pid_t pid, int *status, int options), with errno captured (the JVM may overwrite it before Java reads it)
        WAITPID = libc.find("waitpid").map(s -> linker.downcallHandle(s, FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT),
                Linker.Option.captureCallState("errno"))).orElse(null);
        if (WAITPID == null) missing.add("waitpid");
        STRERROR = find(libc, missing, "strerror", FunctionDescriptor.of(ADDRESS, JAVA_INT));
        // int pipe2(int fds[2], int flags); ssize_t write(int, const void *, size_t), errno captured; int close(int)
        PIPE2 = find(libc, missing, "pipe2", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        WRITE = libc.find("write").map(w -> linker.downcallHandle(w, FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG),
                Linker.Option.captureCallState("errno"))).orElse(null);
        if (WRITE == null) missing.add("write");
        CLOSE = find(libc, missing, "close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
        UNAVAILABLE = !System.getProperty("os.name").equals("Linux") ? "not Linux"
                : missing.isEmpty() ? null : "the C library lacks " + String.join(", ", missing) + " (glibc 2.34 or newer has them)";
    }

    private PosixSpawn() {
    }

    private static MethodHandle find(SymbolLookup libc, List<String> missing, String name, FunctionDescriptor fd) {
        Optional<MemorySegment> s = libc.find(name);
        if (s.isEmpty()) missing.add(name);
        return s.map(a -> Linker.nativeLinker().downcallHandle(a, fd)).orElse(null);
    }

    /** Why jobs cannot be spawned this way here (the agent falls back to ProcessBuilder); null when they can. */
    static String unavailableReason() {
        return UNAVAILABLE;
    }

    /**
     * Starts {@code argv} (argv[0] is the program's absolute path) as the leader of a new session, in {@code dir},
     * with exactly {@code env}, stdout/stderr appended to the two files (created if needed), and as stdin
     * {@code /dev/null} or, where {@code stdin} is given, a pipe that carries those bytes and then ends: they are
     * written once the program runs (a pipe holds 64 KiB; the program must read what is more while it is written).
     *
     * @return the child's pid; the caller must reap it ({@link ChildReaper})
     * @throws IOException with the C library's reason (a missing program, a file or directory it could not open)
     */
    static long spawn(List<String> argv, Map<String, String> env, Path dir, Path stdout, Path stderr, byte[] stdin) throws IOException {
        if (UNAVAILABLE != null) throw new IOException("posix_spawn unavailable: " + UNAVAILABLE);
        try (Arena arena = Arena.ofConfined()) {
            int[] pipe = stdin == null ? null : pipe(arena);
            try {
                long pid = spawn(arena, argv, env, dir, stdout, stderr, pipe == null ? -1 : pipe[0]);
                if (pipe != null) {
                    closeQuietly(pipe[0]);
                    pipe[0] = -1;
                    writeAll(arena, pipe[1], stdin);
                }
                return pid;
            } finally {
                if (pipe != null) {
                    closeQuietly(pipe[0]);
                    closeQuietly(pipe[1]);
                }
            }
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IOException("posix_spawn could not be called: " + t, t);
        }
    }

    private static long spawn(Arena arena, List<String> argv, Map<String, String> env, Path dir, Path stdout, Path stderr, int stdinFd) throws Throwable {
        MemorySegment actions = arena.allocate(ACTIONS_BYTES, 16);
        MemorySegment attr = arena.allocate(ATTR_BYTES, 16);
        check("posix_spawn_file_actions_init", (int) ACTIONS_INIT.invokeExact(actions));
        try {
            check("posix_spawnattr_init", (int) ATTR_INIT.invokeExact(attr));
            try {
                int append = O_WRONLY | O_CREAT | O_APPEND;
                if (stdinFd >= 0) check("adddup2 stdin", (int) ADD_DUP2.invokeExact(actions, stdinFd, 0));
                else check("addopen stdin", (int) ADD_OPEN.invokeExact(actions, 0, arena.allocateFrom("/dev/null"), O_RDONLY, 0));
                check("addopen stdout", (int) ADD_OPEN.invokeExact(actions, 1, arena.allocateFrom(stdout.toString()), append, 0666));
                check("addopen stderr", (int) ADD_OPEN.invokeExact(actions, 2, arena.allocateFrom(stderr.toString()), append, 0666));
                check("addchdir", (int) ADD_CHDIR.invokeExact(actions, arena.allocateFrom(dir.toString())));
                check("addclosefrom", (int) ADD_CLOSEFROM.invokeExact(actions, 3));
                MemorySegment none = arena.allocate(SIGSET_BYTES, 16), all = arena.allocate(SIGSET_BYTES, 16);
                check("sigemptyset", (int) SIGEMPTYSET.invokeExact(none));
                check("sigfillset", (int) SIGFILLSET.invokeExact(all));
                check("setsigmask", (int) SET_SIGMASK.invokeExact(attr, none));
                check("setsigdefault", (int) SET_SIGDEFAULT.invokeExact(attr, all));
                check("setflags", (int) SET_FLAGS.invokeExact(attr, (short) (POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)));
                MemorySegment pid = arena.allocate(JAVA_INT);
                int rc = (int) SPAWN.invokeExact(pid, arena.allocateFrom(argv.getFirst()), actions, attr,
                        strings(arena, argv), strings(arena, env.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).toList()));
                if (rc != 0) throw new IOException("posix_spawn " + argv.getFirst() + " in " + dir + ": " + strerror(rc));
                return pid.get(JAVA_INT, 0);
            } finally {
                int ignored = (int) ATTR_DESTROY.invokeExact(attr);
            }
        } finally {
            int ignored = (int) ACTIONS_DESTROY.invokeExact(actions);
        }
    }

    /** A pipe, both ends close-on-exec (the child gets its read end as stdin through dup2, which clears the flag). */
    private static int[] pipe(Arena arena) throws Throwable {
        MemorySegment fds = arena.allocate(JAVA_INT, 2);
        if ((int) PIPE2.invokeExact(fds, O_CLOEXEC) != 0) throw new IOException("pipe2 failed");
        return new int[]{fds.getAtIndex(JAVA_INT, 0), fds.getAtIndex(JAVA_INT, 1)};
    }

    /**
     * Writes every byte to {@code fd}. A reader that ended early (EPIPE: the program failed before it read) is not an
     * error of the spawn: the program runs, and its end says why.
     */
    private static void writeAll(Arena arena, int fd, byte[] bytes) throws Throwable {
        MemorySegment buf = arena.allocateFrom(JAVA_BYTE, bytes);
        MemorySegment state = arena.allocate(CALL_STATE);
        long done = 0;
        while (done < bytes.length) {
            long n = (long) WRITE.invokeExact(state, fd, buf.asSlice(done), (long) bytes.length - done);
            if (n >= 0) {
                done += n;
                continue;
            }
            int errno = (int) ERRNO.get(state, 0L);
            if (errno == EINTR) continue;
            if (errno == EPIPE) return;
            throw new IOException("cannot write to the spawned program's stdin: " + strerror(errno));
        }
    }

    private static void closeQuietly(int fd) throws Throwable {
        if (fd >= 0) {
            int ignored = (int) CLOSE.invokeExact(fd);
        }
    }

    /**
     * Waits for child {@code pid} to end and reaps it.
     *
     * @return its wait status (as waitpid's {@code status}); empty when it is not (or no longer) a child of this process
     */
    static Optional<Integer> waitFor(long pid) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment status = arena.allocate(JAVA_INT);
            MemorySegment state = arena.allocate(CALL_STATE);
            while (true) {
                int rc = (int) WAITPID.invokeExact(state, Math.toIntExact(pid), status, 0);
                if (rc == pid) return Optional.of(status.get(JAVA_INT, 0));
                if (rc < 0 && (int) ERRNO.get(state, 0L) == EINTR) continue;
                return Optional.empty(); // ECHILD: someone else reaped it
            }
        } catch (Throwable t) {
            return Optional.empty();
        }
    }

    /** A NULL-terminated char*[] of {@code values}. */
    private static MemorySegment strings(Arena arena, List<String> values) {
        MemorySegment array = arena.allocate(ADDRESS, values.size() + 1);
        for (int i = 0; i < values.size(); i++) array.setAtIndex(ADDRESS, i, arena.allocateFrom(values.get(i)));
        array.setAtIndex(ADDRESS, values.size(), MemorySegment.NULL);
        return array;
    }

    private static void check(String what, int rc) throws IOException {
        if (rc != 0) throw new IOException("posix_spawn set-up (" + what + "): " + strerror(rc));
    }

    private static String strerror(int errno) {
        try {
            return ((MemorySegment) STRERROR.invokeExact(errno)).reinterpret(256).getString(0) + " (errno " + errno + ")";
        } catch (Throwable t) {
            return "errno " + errno;
        }
    }
}
