package io.gpupool.agent.confine;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The two bpf(2) commands a cgroup v2 device filter needs, called through libc's {@code syscall} with FFM (glibc has no
 * bpf() wrapper), and the open/close of the cgroup directory the program is attached to. errno is captured with the
 * call ({@link Linker.Option#captureCallState}): the JVM may overwrite the thread's errno before Java could read it.
 */
final class Bpf {

    static final int BPF_PROG_LOAD = 5;
    static final int BPF_PROG_ATTACH = 8;
    static final int BPF_PROG_TYPE_CGROUP_DEVICE = 15;
    static final int BPF_CGROUP_DEVICE = 6;
    /** Other programs on the path from the root (systemd's, a container runtime's) keep running: every one must allow. */
    static final int BPF_F_ALLOW_MULTI = 2;
    private static final int O_RDONLY = 0;
    private static final int O_CLOEXEC = 02000000;
    /** bpf_attr is a union; 128 zeroed bytes cover both commands' structs (the kernel requires unknown tail bytes be zero). */
    private static final long ATTR_SIZE = 128;
    private static final int LOG_SIZE = 64 * 1024;

    /** union bpf_attr, BPF_PROG_LOAD's part (include/uapi/linux/bpf.h). */
    private static final StructLayout PROG_LOAD = MemoryLayout.structLayout(
            JAVA_INT.withName("prog_type"), JAVA_INT.withName("insn_cnt"),
            JAVA_LONG.withName("insns"), JAVA_LONG.withName("license"),
            JAVA_INT.withName("log_level"), JAVA_INT.withName("log_size"), JAVA_LONG.withName("log_buf"),
            JAVA_INT.withName("kern_version"), JAVA_INT.withName("prog_flags"),
            MemoryLayout.sequenceLayout(16, JAVA_BYTE).withName("prog_name"),
            JAVA_INT.withName("prog_ifindex"), JAVA_INT.withName("expected_attach_type"));
    /** BPF_PROG_ATTACH's part. */
    private static final StructLayout PROG_ATTACH = MemoryLayout.structLayout(
            JAVA_INT.withName("target_fd"), JAVA_INT.withName("attach_bpf_fd"),
            JAVA_INT.withName("attach_type"), JAVA_INT.withName("attach_flags"));

    private static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final Linker.Option CAPTURE = Linker.Option.captureCallState("errno");
    private static final Long SYS_BPF = switch (System.getProperty("os.arch")) {
        case "amd64", "x86_64" -> 321L;
        case "aarch64" -> 280L;
        default -> null;
    };
    private static final MethodHandle SYSCALL;
    private static final MethodHandle OPEN;
    private static final MethodHandle CLOSE;

    static {
        Linker linker = Linker.nativeLinker();
        var libc = linker.defaultLookup();
        // long syscall(long number, ...): here (SYS_bpf, int cmd, union bpf_attr *attr, unsigned int size)
        SYSCALL = libc.find("syscall").map(s -> linker.downcallHandle(s,
                FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT),
                Linker.Option.firstVariadicArg(1), CAPTURE)).orElse(null);
        OPEN = libc.find("open").map(s -> linker.downcallHandle(s,
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT), Linker.Option.firstVariadicArg(2), CAPTURE)).orElse(null);
        CLOSE = libc.find("close").map(s -> linker.downcallHandle(s, FunctionDescriptor.of(JAVA_INT, JAVA_INT))).orElse(null);
    }

    private Bpf() {
    }

    /** Why this JVM cannot make the calls (not Linux on x86-64 or arm64, no libc symbol); null when it can. */
    static String unsupportedReason() {
        if (SYS_BPF == null) return "bpf(2): no syscall number known for " + System.getProperty("os.arch");
        if (SYSCALL == null || OPEN == null || CLOSE == null) return "bpf(2): libc's syscall/open/close not found";
        return null;
    }

    /** How many loaded programs {@link #attachDeviceFilter} keeps for reuse: one per set of GPUs a job got, most recent. */
    static final int LOADED_PROGRAMS_KEPT = 64;

    /**
     * Loaded programs by their instructions, each an open file descriptor (O_CLOEXEC, as bpf(2) makes them): a job
     * start attaches the one its devices need instead of loading it again, which ran the verifier and the JIT every
     * time (about 1 ms of a job's start on a slow VM). Closing one that is attached elsewhere is harmless: an
     * attachment holds its program.
     */
    private static final Map<List<Long>, Integer> LOADED = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<List<Long>, Integer> eldest) {
            if (size() <= LOADED_PROGRAMS_KEPT) return false;
            close(eldest.getValue());
            return true;
        }
    };

    /**
     * Attaches {@code program} as a BPF_PROG_TYPE_CGROUP_DEVICE program to the cgroup v2 directory {@code cgroupDir},
     * loading it first unless the same program is already loaded. The attachment holds the program, which goes away
     * with the last cgroup it is attached to once it is no longer kept here.
     *
     * @throws IOException naming the call, the errno and, for a program the verifier refused, its log
     */
    static void attachDeviceFilter(Path cgroupDir, long[] program) throws IOException {
        String unsupported = unsupportedReason();
        if (unsupported != null) throw new IOException(unsupported);
        // under the lock: a kept descriptor closed by another start's eviction could be a new file's by the attach
        synchronized (LOADED) {
            attach(cgroupDir, program);
        }
    }

    private static void attach(Path cgroupDir, long[] program) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            int prog = loaded(arena, program);
            int cgroup = open(arena, cgroupDir);
            try {
                MemorySegment attr = arena.allocate(ATTR_SIZE, 8);
                attr.set(JAVA_INT, offset(PROG_ATTACH, "target_fd"), cgroup);
                attr.set(JAVA_INT, offset(PROG_ATTACH, "attach_bpf_fd"), prog);
                attr.set(JAVA_INT, offset(PROG_ATTACH, "attach_type"), BPF_CGROUP_DEVICE);
                attr.set(JAVA_INT, offset(PROG_ATTACH, "attach_flags"), BPF_F_ALLOW_MULTI);
                MemorySegment state = arena.allocate(CALL_STATE);
                long rc = bpf(state, BPF_PROG_ATTACH, attr);
                if (rc < 0) throw new IOException("bpf(BPF_PROG_ATTACH, BPF_CGROUP_DEVICE) on " + cgroupDir + ": " + Errno.describe(errno(state)));
            } finally {
                close(cgroup);
            }
        }
    }

    /** The descriptor of {@code program} loaded: kept from an earlier load, else loaded now and kept (LOADED's lock held). */
    private static int loaded(Arena arena, long[] program) throws IOException {
        List<Long> key = Arrays.stream(program).boxed().toList();
        Integer fd = LOADED.get(key);
        if (fd == null) {
            fd = load(arena, program, false);
            LOADED.put(key, fd);
        }
        return fd;
    }

    /** How many loaded programs are kept now. */
    static int loadedPrograms() {
        synchronized (LOADED) {
            return LOADED.size();
        }
    }

    /** BPF_PROG_LOAD; on a refusal it loads again with the verifier's log, so the error says what it objected to. */
    private static int load(Arena arena, long[] program, boolean withLog) throws IOException {
        MemorySegment insns = arena.allocate(JAVA_LONG, program.length);
        for (int i = 0; i < program.length; i++) insns.setAtIndex(JAVA_LONG, i, program[i]);
        MemorySegment license = arena.allocateFrom("GPL");
        MemorySegment attr = arena.allocate(ATTR_SIZE, 8);
        attr.set(JAVA_INT, offset(PROG_LOAD, "prog_type"), BPF_PROG_TYPE_CGROUP_DEVICE);
        attr.set(JAVA_INT, offset(PROG_LOAD, "insn_cnt"), program.length);
        attr.set(JAVA_LONG, offset(PROG_LOAD, "insns"), insns.address());
        attr.set(JAVA_LONG, offset(PROG_LOAD, "license"), license.address());
        attr.set(JAVA_INT, offset(PROG_LOAD, "expected_attach_type"), BPF_CGROUP_DEVICE);
        byte[] name = "gpupool_dev".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        MemorySegment.copy(name, 0, attr, JAVA_BYTE, offset(PROG_LOAD, "prog_name"), name.length);
        MemorySegment log = null;
        if (withLog) {
            log = arena.allocate(LOG_SIZE);
            attr.set(JAVA_INT, offset(PROG_LOAD, "log_level"), 1);
            attr.set(JAVA_INT, offset(PROG_LOAD, "log_size"), LOG_SIZE);
            attr.set(JAVA_LONG, offset(PROG_LOAD, "log_buf"), log.address());
        }
        MemorySegment state = arena.allocate(CALL_STATE);
        long fd = bpf(state, BPF_PROG_LOAD, attr);
        if (fd >= 0) return Math.toIntExact(fd);
        int errno = errno(state);
        // EINVAL, EACCES: the verifier refused it; loading again with its log makes the error say why
        if (!withLog && (errno == 22 || errno == 13)) return load(arena, program, true);
        String verifier = log == null ? "" : "; verifier: " + log.getString(0).strip();
        throw new IOException("bpf(BPF_PROG_LOAD, BPF_PROG_TYPE_CGROUP_DEVICE, " + program.length + " instructions): "
                + Errno.describe(errno) + verifier);
    }

    private static long bpf(MemorySegment state, int cmd, MemorySegment attr) throws IOException {
        try {
            return (long) SYSCALL.invokeExact(state, (long) SYS_BPF, cmd, attr, (int) ATTR_SIZE);
        } catch (Throwable t) {
            throw new IOException("bpf(2) could not be called: " + t, t);
        }
    }

    private static int open(Arena arena, Path dir) throws IOException {
        MemorySegment state = arena.allocate(CALL_STATE);
        int fd;
        try {
            fd = (int) OPEN.invokeExact(state, arena.allocateFrom(dir.toString()), O_RDONLY | O_CLOEXEC);
        } catch (Throwable t) {
            throw new IOException("open(2) could not be called: " + t, t);
        }
        if (fd < 0) throw new IOException("open " + dir + ": " + Errno.describe(errno(state)));
        return fd;
    }

    private static void close(int fd) {
        try {
            int ignored = (int) CLOSE.invokeExact(fd);
        } catch (Throwable t) {
            // a descriptor we cannot close leaks; nothing else depends on it
        }
    }

    private static int errno(MemorySegment state) {
        return (int) ERRNO.get(state, 0L);
    }

    private static long offset(StructLayout layout, String field) {
        return layout.byteOffset(MemoryLayout.PathElement.groupElement(field));
    }
}
