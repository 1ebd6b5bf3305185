package io.gpupool.agent.confine;

import io.gpupool.agent.protocol.NodeConfinement;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The node's side of job confinement: at agent start it sets up gpupool's parent groups in every hierarchy the
 * {@link CgroupLayout} names ({@code gpupool/<node>} under the v2 base and under each v1 mount), enables the v2
 * controllers it needs on the way down, checks that a BPF device filter can be attached, and says what the node
 * enforces ({@link NodeConfinement}). Then it makes one {@link AttemptCgroup} per attempt.
 *
 * <p>Without root, or without any cgroup file system, jobs run as before (plain process groups) and the description
 * says "none" with the reason.
 */
public final class Confinement {

    /** Processes and threads per attempt by default: far above what a training job with data-loader workers makes, far below a fork bomb's reach. */
    public static final long DEFAULT_PIDS_MAX = 32_768;
    private static final List<String> V2_CONTROLLERS = List.of("cpu", "memory", "pids");

    /**
     * How the agent confines jobs.
     *
     * @param enabled        make cgroups for jobs (off: jobs run as plain process groups, the node says "none")
     * @param pidsMax        processes and threads per attempt at most (0: no limit)
     * @param fakeDeviceDir  with fake GPUs: make real device nodes for them here ({@link DeviceNodes#createFake}) and
     *                       filter by those; null: NVIDIA's nodes under /dev
     */
    public record Settings(boolean enabled, long pidsMax, Path fakeDeviceDir) {
        public Settings {
            if (pidsMax < 0) throw new IllegalArgumentException("pids max must be >= 0, got " + pidsMax);
        }

        public static Settings on() {
            return new Settings(true, DEFAULT_PIDS_MAX, null);
        }

        /** No cgroups: in-process agents (the demo, tests) unless they ask. */
        public static Settings off() {
            return new Settings(false, DEFAULT_PIDS_MAX, null);
        }

        public Settings withFakeDeviceDir(Path dir) {
            return new Settings(enabled, pidsMax, dir);
        }
    }

    /** How many device filter programs are loaded and kept for reuse in this process (one per set of devices). */
    public static int deviceFiltersLoaded() {
        return Bpf.loadedPrograms();
    }

    /**
     * The node's confinement from the settings: detects the cgroup layout and sets up the node's groups; with a fake
     * device directory, makes the fake GPUs' device nodes first.
     *
     * @throws IOException when the fake device nodes cannot be made (asked for explicitly, so not passed over)
     */
    public static Confinement start(Settings settings, String nodeName, int gpuCount) throws IOException {
        DeviceNodes devices = settings.fakeDeviceDir() == null ? DeviceNodes.system() : DeviceNodes.createFake(settings.fakeDeviceDir(), gpuCount);
        if (!settings.enabled()) return off("turned off (--no-confine)", devices);
        return open(CgroupLayout.detect(), nodeName, devices, settings.pidsMax());
    }

    private final NodeConfinement description;
    /** The node's parent directories, as templates for an attempt's: hierarchy, controllers, path. */
    private final List<AttemptCgroup.Dir> parents;
    private final boolean bpf;
    private final boolean v1Devices;
    private final DeviceNodes devices;
    private final long pidsMax;

    private Confinement(NodeConfinement description, List<AttemptCgroup.Dir> parents, boolean bpf, boolean v1Devices,
                        DeviceNodes devices, long pidsMax) {
        this.description = description;
        this.parents = List.copyOf(parents);
        this.bpf = bpf;
        this.v1Devices = v1Devices;
        this.devices = devices;
        this.pidsMax = pidsMax;
    }

    /** No confinement: jobs run as plain process groups; {@code reason} says why. */
    public static Confinement off(String reason, DeviceNodes devices) {
        return new Confinement(NodeConfinement.none(reason), List.of(), false, false, devices, 0);
    }

    /**
     * Sets up the node's groups in {@code layout}'s hierarchies. Parts the kernel refuses are left out and listed as
     * missing; the node still confines what it can.
     *
     * @param nodeName the node (its groups are {@code gpupool/<node>}, so agents of several nodes on one machine, as in
     *                 the demo, do not meet)
     * @param pidsMax  processes per attempt at most, 0 for no limit
     */
    public static Confinement open(CgroupLayout layout, String nodeName, DeviceNodes devices, long pidsMax) {
        if (layout.mode().equals("none")) {
            return off(layout.notes().isEmpty() ? "no cgroup file system is mounted" : String.join("; ", layout.notes()), devices);
        }
        long uid = effectiveUid();
        if (uid != 0) return off("the agent does not run as root (uid " + uid + "): it cannot create cgroups", devices);
        List<String> enforced = new ArrayList<>();
        List<String> missing = new ArrayList<>();
        List<AttemptCgroup.Dir> parents = new ArrayList<>();
        boolean bpf = false;
        String kill = null;
        Map<String, String> where = new LinkedHashMap<>(); // controller -> "v1" / "v2"

        if (layout.v2Mount() != null) {
            Path base = layout.v2Base();
            Path top = base.resolve("gpupool");
            Path node = top.resolve(nodeName);
            Set<String> enabled = new LinkedHashSet<>();
            for (String c : V2_CONTROLLERS) if (layout.v2Controllers().contains(c)) enabled.add(c);
            try {
                // each level passes the controllers down to the next: base -> gpupool -> <node> -> attempts
                for (Path level : List.of(base, top, node)) {
                    if (!level.equals(base)) mkdir(level);
                    for (String c : List.copyOf(enabled)) {
                        try {
                            enable(level, c);
                        } catch (IOException e) {
                            enabled.remove(c);
                            missing.add(c + ": " + e.getMessage());
                        }
                    }
                }
                enabled.forEach(c -> where.put(c, "v2"));
                try {
                    probeBpf(node, devices);
                    bpf = true;
                } catch (IOException | RuntimeException e) {
                    missing.add("devices(bpf): " + e.getMessage());
                }
                if (Files.exists(node.resolve("cgroup.kill"))) kill = "cgroup.kill";
                Set<String> controllers = new LinkedHashSet<>(enabled);
                if (bpf) controllers.add("devices");
                parents.add(new AttemptCgroup.Dir("v2", controllers, node));
            } catch (IOException e) {
                missing.add("cgroup v2: " + e.getMessage());
            }
        }
        // v1: one parent per mounted hierarchy that has a controller v2 does not provide
        Map<Path, Set<String>> byMount = new LinkedHashMap<>();
        for (String c : CgroupLayout.CONTROLLERS) {
            if (where.containsKey(c) || !"v1".equals(layout.hierarchyOf(c))) continue;
            if (c.equals("freezer") && "cgroup.kill".equals(kill)) continue; // cgroup.kill does its work
            byMount.computeIfAbsent(layout.v1Mounts().get(c), m -> new LinkedHashSet<>()).add(c);
        }
        boolean v1Devices = false;
        for (Map.Entry<Path, Set<String>> e : byMount.entrySet()) {
            Path node = e.getKey().resolve("gpupool").resolve(nodeName);
            try {
                mkdirs(node);
                parents.add(new AttemptCgroup.Dir("v1", e.getValue(), node));
                for (String c : e.getValue()) where.put(c, "v1");
                if (e.getValue().contains("devices")) v1Devices = true;
                if (kill == null && e.getValue().contains("freezer")) kill = "freezer";
            } catch (IOException ex) {
                for (String c : e.getValue()) missing.add(c + ": " + ex.getMessage());
            }
        }
        for (String c : V2_CONTROLLERS) {
            if (where.containsKey(c)) {
                enforced.add(c + "(" + where.get(c) + ")");
                if (c.equals("memory")) swap(layout, parents, where.get(c), enforced, missing);
            } else if (missing.stream().noneMatch(m -> m.startsWith(c + ":"))) {
                missing.add(c + ": no cgroup hierarchy provides the " + c + " controller");
            }
        }
        if (v1Devices) enforced.add("devices(v1)");
        if (bpf) enforced.add("devices(bpf)");
        if (!v1Devices && !bpf && missing.stream().noneMatch(m -> m.startsWith("devices"))) {
            missing.add("devices: neither a v1 devices controller nor a cgroup2 mount for a BPF filter");
        }
        if (kill != null) enforced.add("kill(" + kill + ")");
        else missing.add("kill: no cgroup.kill (kernel < 5.14) and no v1 freezer: leftover processes are killed one by one");
        if (parents.isEmpty()) return off("no cgroup could be set up: " + String.join("; ", missing), devices);
        return new Confinement(new NodeConfinement(layout.mode(), enforced, missing, null), parents, bpf, v1Devices, devices, pidsMax);
    }

    private static void swap(CgroupLayout layout, List<AttemptCgroup.Dir> parents, String hierarchy, List<String> enforced, List<String> missing) {
        for (AttemptCgroup.Dir d : parents) {
            if (!d.hierarchy().equals(hierarchy) || !d.controllers().contains("memory")) continue;
            String file = hierarchy.equals("v2") ? "memory.swap.max" : "memory.memsw.limit_in_bytes";
            if (Files.exists(d.path().resolve(file))) enforced.add("swap(" + hierarchy + ")");
            else missing.add("swap: no " + file + " (swap accounting is off): a job may swap beyond its memory limit");
            return;
        }
    }

    /** Attaches a filter to a throw-away group once, so the node says "devices(bpf)" only where the kernel takes it. */
    private static void probeBpf(Path node, DeviceNodes devices) throws IOException {
        Path probe = node.resolve("probe-" + ProcessHandle.current().pid());
        mkdir(probe);
        try {
            Bpf.attachDeviceFilter(probe, DeviceFilterProgram.allowOnly(devices.allowedFor(List.of())));
        } finally {
            try {
                Files.deleteIfExists(probe);
            } catch (IOException e) {
                // an empty group; the next start's probe has another name
            }
        }
    }

    private static void enable(Path level, String controller) throws IOException {
        Path control = level.resolve("cgroup.subtree_control");
        if (List.of(Files.readString(control).trim().split("\\s+")).contains(controller)) return;
        AttemptCgroup.write(control, "+" + controller);
    }

    private static void mkdir(Path dir) throws IOException {
        try {
            Files.createDirectory(dir);
        } catch (java.nio.file.FileAlreadyExistsException e) {
            // an earlier agent start made it
        } catch (IOException e) {
            throw new IOException("mkdir " + dir + ": " + Errno.describe(e), e);
        }
    }

    private static void mkdirs(Path dir) throws IOException {
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new IOException("mkdir " + dir + ": " + Errno.describe(e), e);
        }
    }

    private static long effectiveUid() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("Uid:")) return Long.parseLong(line.substring(4).trim().split("\\s+")[1]);
            }
        } catch (IOException | RuntimeException e) {
            // not Linux
        }
        return -1;
    }

    public NodeConfinement description() {
        return description;
    }

    /** Whether jobs get cgroups here. */
    public boolean active() {
        return !parents.isEmpty();
    }

    public DeviceNodes devices() {
        return devices;
    }

    /**
     * Makes the groups of one attempt with its limits; empty when the node confines nothing.
     *
     * @param name      the attempt's group name (its job directory's name)
     * @param cpuMilli  host CPU, 0 = no limit
     * @param memoryMib host memory, 0 = no limit
     * @param gpuMinors the minor numbers of the granted GPUs' device nodes
     */
    public Optional<AttemptCgroup> create(String name, long cpuMilli, long memoryMib, List<Integer> gpuMinors) throws IOException {
        if (parents.isEmpty()) return Optional.empty();
        List<AttemptCgroup.Dir> dirs = new ArrayList<>();
        for (AttemptCgroup.Dir p : parents) dirs.add(new AttemptCgroup.Dir(p.hierarchy(), p.controllers(), p.path().resolve(name)));
        List<DeviceRule> rules = bpf || v1Devices ? devices.allowedFor(gpuMinors) : null;
        return Optional.of(AttemptCgroup.create(dirs, new AttemptCgroup.Limits(cpuMilli, memoryMib, pidsMax, rules, bpf)));
    }

    @Override
    public String toString() {
        return description.toString();
    }
}
