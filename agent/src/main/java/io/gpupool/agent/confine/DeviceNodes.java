package io.gpupool.agent.confine;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The device nodes a job may open: its GPUs' {@code nvidiaN} (major 195, minor = the GPU's minor number), the control
 * devices CUDA opens ({@code nvidiactl} 195:255, {@code nvidia-modeset} 195:254, {@code nvidia-uvm} and
 * {@code nvidia-uvm-tools}, whose major the driver picks at load time: read from /proc/devices), and the devices every
 * process expects (null, zero, full, random, urandom, tty, ptmx, the pts terminals). Everything else is denied.
 *
 * <p>Fake GPUs can get real nodes of their own ({@link #createFake}): character devices with NVIDIA's major in a
 * directory the agent owns, so the filter is exercised for real on a machine without NVIDIA's driver.
 */
public final class DeviceNodes {

    public static final int NVIDIA_MAJOR = 195;
    static final int NVIDIACTL_MINOR = 255;
    static final int MODESET_MINOR = 254;

    /** Devices any process needs (what runc and Slurm allow by default, less mknod). */
    static final List<DeviceRule> BASE = List.of(
            DeviceRule.chr(1, 3, "null"), DeviceRule.chr(1, 5, "zero"), DeviceRule.chr(1, 7, "full"),
            DeviceRule.chr(1, 8, "random"), DeviceRule.chr(1, 9, "urandom"), DeviceRule.chr(5, 0, "tty"),
            DeviceRule.chr(5, 2, "ptmx"), DeviceRule.chr(136, DeviceRule.ANY, "pts"));

    private final Path dir;
    private final OptionalInt uvmMajor;

    private DeviceNodes(Path dir, OptionalInt uvmMajor) {
        this.dir = dir;
        this.uvmMajor = uvmMajor;
    }

    /** NVIDIA's nodes under /dev; nvidia-uvm's major from /proc/devices (absent without the driver). */
    public static DeviceNodes system() {
        String devices;
        try {
            devices = Files.readString(Path.of("/proc/devices"));
        } catch (IOException e) {
            devices = "";
        }
        return new DeviceNodes(Path.of("/dev"), uvmMajor(devices));
    }

    /** Fake GPUs' nodes in {@code dir} (made by {@link #createFake}); no UVM device. */
    public static DeviceNodes fake(Path dir) {
        return new DeviceNodes(dir, OptionalInt.empty());
    }

    /** The character-device major named {@code nvidia-uvm} in /proc/devices' "Character devices:" section. */
    static OptionalInt uvmMajor(String procDevices) {
        boolean chars = false;
        for (String line : procDevices.split("\n")) {
            String l = line.trim();
            if (l.endsWith(":")) {
                chars = l.equals("Character devices:");
                continue;
            }
            String[] f = l.split("\\s+");
            if (chars && f.length == 2 && f[1].equals("nvidia-uvm")) {
                try {
                    return OptionalInt.of(Integer.parseInt(f[0]));
                } catch (NumberFormatException e) {
                    return OptionalInt.empty();
                }
            }
        }
        return OptionalInt.empty();
    }

    public Path dir() {
        return dir;
    }

    /** The node of the GPU with this minor number. */
    public Path gpuNode(int minor) {
        return dir.resolve("nvidia" + minor);
    }

    /** What a job with GPUs of these minor numbers may open (fractional jobs sharing a GPU all get its one node). */
    public List<DeviceRule> allowedFor(List<Integer> gpuMinors) {
        List<DeviceRule> rules = new ArrayList<>(BASE);
        for (int m : gpuMinors) rules.add(DeviceRule.chr(NVIDIA_MAJOR, m, "nvidia" + m));
        if (!gpuMinors.isEmpty()) {
            // a CUDA program opens the control devices too; a job without GPUs needs none of them
            rules.add(DeviceRule.chr(NVIDIA_MAJOR, NVIDIACTL_MINOR, "nvidiactl"));
            rules.add(DeviceRule.chr(NVIDIA_MAJOR, MODESET_MINOR, "nvidia-modeset"));
            if (uvmMajor.isPresent()) {
                rules.add(DeviceRule.chr(uvmMajor.getAsInt(), 0, "nvidia-uvm"));
                rules.add(DeviceRule.chr(uvmMajor.getAsInt(), 1, "nvidia-uvm-tools"));
            }
        }
        return rules;
    }

    /**
     * Makes {@code dir/nvidia0..count-1} (195:N) and {@code dir/nvidiactl} (195:255), mode 0666 so that only the
     * cgroup filter stands between a job and a node. Without NVIDIA's driver, opening one that the filter lets through
     * fails with ENXIO; one it refuses fails with EPERM. Existing nodes with the right numbers are kept.
     */
    public static DeviceNodes createFake(Path dir, int count) throws IOException {
        Files.createDirectories(dir);
        for (int i = 0; i < count; i++) mknod(dir.resolve("nvidia" + i), NVIDIA_MAJOR, i);
        mknod(dir.resolve("nvidiactl"), NVIDIA_MAJOR, NVIDIACTL_MINOR);
        return fake(dir);
    }

    private static final int S_IFCHR = 0020000;
    private static final MethodHandle MKNOD = Linker.nativeLinker().defaultLookup().find("mknod")
            .map(s -> Linker.nativeLinker().downcallHandle(s, FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_LONG),
                    Linker.Option.captureCallState("errno")))
            .orElse(null);
    private static final VarHandle ERRNO = Linker.Option.captureStateLayout().varHandle(MemoryLayout.PathElement.groupElement("errno"));

    private static void mknod(Path node, int major, int minor) throws IOException {
        if (Files.exists(node, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            Object rdev = Files.getAttribute(node, "unix:rdev", java.nio.file.LinkOption.NOFOLLOW_LINKS);
            if (rdev instanceof Long r && r == makedev(major, minor)) {
                Files.setPosixFilePermissions(node, PosixFilePermissions.fromString("rw-rw-rw-"));
                return;
            }
            Files.delete(node);
        }
        if (MKNOD != null) {
            try (Arena a = Arena.ofConfined()) {
                MemorySegment state = a.allocate(Linker.Option.captureStateLayout());
                int rc = (int) MKNOD.invokeExact(state, a.allocateFrom(node.toString()), S_IFCHR | 0666, makedev(major, minor));
                if (rc != 0) throw new IOException("mknod " + node + " c " + major + " " + minor + ": " + Errno.describe((int) ERRNO.get(state, 0L)));
            } catch (IOException e) {
                throw e;
            } catch (Throwable t) {
                throw new IOException("mknod(2) could not be called: " + t, t);
            }
        } else {
            // libc before 2.33 exports no mknod symbol (only __xmknod): the coreutils command does the same
            runMknod(node, major, minor);
        }
        // the process umask applied to the mode: set it as meant
        Files.setPosixFilePermissions(node, PosixFilePermissions.fromString("rw-rw-rw-"));
    }

    private static void runMknod(Path node, int major, int minor) throws IOException {
        Process p = new ProcessBuilder("mknod", node.toString(), "c", Integer.toString(major), Integer.toString(minor))
                .redirectErrorStream(true).start();
        try {
            String out = new String(p.getInputStream().readAllBytes()).trim();
            if (p.waitFor() != 0) throw new IOException("mknod " + node + " c " + major + " " + minor + ": " + out);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while making " + node, e);
        }
    }

    /** glibc's makedev: 12 bits of major and 20 of minor, split around each other. */
    static long makedev(int major, int minor) {
        long ma = major & 0xFFFF_FFFFL, mi = minor & 0xFFFF_FFFFL;
        return ((ma & 0xFFFF_F000L) << 32) | ((ma & 0xFFFL) << 8) | ((mi & 0xFFFF_FF00L) << 12) | (mi & 0xFFL);
    }
}
