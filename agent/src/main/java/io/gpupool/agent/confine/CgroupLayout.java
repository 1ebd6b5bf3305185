package io.gpupool.agent.confine;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which cgroup hierarchy provides each controller the agent uses, read at agent start from /proc/self/mountinfo and
 * /proc/self/cgroup. Three layouts occur: pure v2 (one cgroup2 mount, controllers listed in cgroup.controllers), v1
 * (one mount per controller, or a few co-mounted), and hybrid (v1 controllers plus a cgroup2 mount with few or no
 * controllers, e.g. systemd's /sys/fs/cgroup/unified). A controller bound to a v1 hierarchy never appears in v2's
 * cgroup.controllers, so "listed in v2, else mounted as v1, else missing" decides each one.
 *
 * <p>Nothing here writes: {@link Confinement} creates the groups.
 *
 * @param v2Mount       the cgroup2 mount point, null when there is none (or it is read-only)
 * @param v2Base        where gpupool's v2 groups go: the parent of the agent's own v2 cgroup (a sibling of the agent, as
 *                      v2's "no processes in inner groups" rule asks), the mount point when the agent sits at the root
 * @param v2Controllers the controllers {@code v2Base/cgroup.controllers} offers
 * @param v1Mounts      v1 controller name → its hierarchy's mount point (co-mounted controllers share one)
 * @param notes         why a hierarchy was passed over (read-only, unreadable), for the node's description
 */
public record CgroupLayout(Path v2Mount, Path v2Base, Set<String> v2Controllers, Map<String, Path> v1Mounts, List<String> notes) {

    /** The controllers gpupool uses; devices and freezer only exist in v1 (v2 has a BPF filter and cgroup.kill instead). */
    public static final List<String> CONTROLLERS = List.of("cpu", "memory", "pids", "devices", "freezer");

    public CgroupLayout {
        v2Controllers = Set.copyOf(v2Controllers);
        v1Mounts = Map.copyOf(v1Mounts);
        notes = List.copyOf(notes);
        if ((v2Mount == null) != (v2Base == null)) throw new IllegalArgumentException("v2 mount and base go together");
    }

    /** This process's layout. */
    public static CgroupLayout detect() {
        try {
            return detect(Files.readString(Path.of("/proc/self/mountinfo")), Files.readString(Path.of("/proc/self/cgroup")));
        } catch (IOException e) {
            return new CgroupLayout(null, null, Set.of(), Map.of(), List.of("cannot read /proc/self/mountinfo or /proc/self/cgroup: "
                    + Errno.describe(e)));
        }
    }

    /**
     * The layout that {@code mountinfo} and {@code selfCgroup} (the contents of /proc/self/mountinfo and /proc/self/cgroup)
     * describe; the v2 base's cgroup.controllers is read from the file system.
     */
    public static CgroupLayout detect(String mountinfo, String selfCgroup) {
        Path v2Mount = null;
        String v2Root = "/";
        Map<String, Path> v1 = new LinkedHashMap<>();
        List<String> notes = new ArrayList<>();
        for (String line : mountinfo.split("\n")) {
            int dash = line.indexOf(" - ");
            if (dash < 0) continue;
            String[] before = line.substring(0, dash).split(" ");
            String[] after = line.substring(dash + 3).split(" ");
            if (before.length < 6 || after.length < 3) continue;
            String fsType = after[0];
            if (!fsType.equals("cgroup2") && !fsType.equals("cgroup")) continue;
            Path mountPoint = Path.of(unescape(before[4]));
            boolean readOnly = Arrays.asList(before[5].split(",")).contains("ro");
            if (fsType.equals("cgroup2")) {
                if (readOnly) {
                    notes.add("cgroup2 at " + mountPoint + " is mounted read-only");
                } else if (v2Mount == null) {
                    v2Mount = mountPoint;
                    v2Root = unescape(before[3]);
                }
                continue;
            }
            for (String option : after[2].split(",")) {
                if (!CONTROLLERS.contains(option) || v1.containsKey(option)) continue;
                if (readOnly) notes.add("cgroup v1 " + option + " at " + mountPoint + " is mounted read-only");
                else v1.put(option, mountPoint);
            }
        }
        Path v2Base = null;
        Set<String> v2Controllers = new LinkedHashSet<>();
        if (v2Mount != null) {
            v2Base = v2Mount;
            String own = ownV2Path(selfCgroup);
            if (own != null && own.startsWith(v2Root)) {
                String relative = own.substring(v2Root.length()).replaceAll("^/+", "");
                Path ownDir = relative.isEmpty() ? v2Mount : v2Mount.resolve(relative);
                v2Base = ownDir.equals(v2Mount) ? v2Mount : ownDir.getParent();
            } else if (own != null) {
                notes.add("the agent's cgroup " + own + " lies outside what is mounted at " + v2Mount + ": groups go under the mount point");
            }
            try {
                String listed = Files.readString(v2Base.resolve("cgroup.controllers")).trim();
                if (!listed.isEmpty()) v2Controllers.addAll(Arrays.asList(listed.split("\\s+")));
            } catch (IOException e) {
                notes.add("cannot read " + v2Base.resolve("cgroup.controllers") + ": " + Errno.describe(e));
            }
        }
        return new CgroupLayout(v2Mount, v2Base, v2Controllers, v1, notes);
    }

    /** The v2 line of /proc/self/cgroup ("0::/path"). */
    private static String ownV2Path(String selfCgroup) {
        for (String line : selfCgroup.split("\n")) {
            if (line.startsWith("0::")) return line.substring(3).trim();
        }
        return null;
    }

    /** mountinfo writes space, tab, newline and backslash as octal escapes (\040). */
    private static String unescape(String s) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' && i + 3 < s.length() && s.substring(i + 1, i + 4).matches("[0-7]{3}")) {
                b.append((char) Integer.parseInt(s.substring(i + 1, i + 4), 8));
                i += 3;
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    /** "v2", "v1", "hybrid" or "none". */
    public String mode() {
        boolean v1 = !v1Mounts.isEmpty();
        if (v2Mount != null && v1) return "hybrid";
        if (v2Mount != null) return "v2";
        return v1 ? "v1" : "none";
    }

    /** "v2" when the v2 base offers {@code controller}, "v1" when a v1 hierarchy has it, else null. */
    public String hierarchyOf(String controller) {
        if (v2Mount != null && v2Controllers.contains(controller)) return "v2";
        if (v1Mounts.containsKey(controller)) return "v1";
        return null;
    }

    /** The same without the v1 hierarchies (a test of the v2 paths alone on a hybrid machine). */
    public CgroupLayout withoutV1() {
        return new CgroupLayout(v2Mount, v2Base, v2Controllers, Map.of(), notes);
    }

    /** The same without the cgroup2 mount (a test of the v1 paths alone on a hybrid machine). */
    public CgroupLayout withoutV2() {
        return new CgroupLayout(null, null, Set.of(), v1Mounts, notes);
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder(mode());
        if (v2Mount != null) b.append(" v2=").append(v2Base).append(' ').append(v2Controllers);
        v1Mounts.forEach((c, p) -> b.append(" v1:").append(c).append('=').append(p));
        return b.toString();
    }
}
