package io.gpupool.agent.confine;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** Detection on made-up trees: each layout's mountinfo and /proc/self/cgroup as the kernel writes them. */
class CgroupLayoutTest {

    @TempDir
    Path root;

    private static String cgroup2(int id, Path at, String options) {
        return id + " 25 0:" + id + " / " + at + " " + options + " shared:4 - cgroup2 cgroup2 rw,nsdelegate\n";
    }

    private static String cgroup1(int id, Path at, String controllers) {
        return id + " 25 0:" + id + " / " + at + " rw,nosuid,nodev,noexec,relatime shared:9 - cgroup cgroup rw," + controllers + "\n";
    }

    @Test
    void pureV2PutsGroupsBesideTheAgentAndOffersWhatItsParentLists() throws Exception {
        Path mount = root.resolve("cgroup");
        Files.createDirectories(mount.resolve("system.slice/gpupool-agent.service"));
        Files.writeString(mount.resolve("system.slice/cgroup.controllers"), "cpuset cpu io memory pids\n");
        String mountinfo = "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n" + cgroup2(30, mount, "rw,nosuid,nodev,noexec,relatime");

        CgroupLayout l = CgroupLayout.detect(mountinfo, "0::/system.slice/gpupool-agent.service\n");

        assertThat(l.mode()).isEqualTo("v2");
        assertThat(l.v2Base()).isEqualTo(mount.resolve("system.slice"));
        assertThat(l.v2Controllers()).contains("cpu", "memory", "pids");
        assertThat(l.hierarchyOf("memory")).isEqualTo("v2");
        assertThat(l.hierarchyOf("devices")).as("v2 has no devices controller: a BPF filter instead").isNull();
        assertThat(l.v1Mounts()).isEmpty();
    }

    @Test
    void v1FindsEachControllersHierarchyCoMountedOnesIncluded() {
        Path fs = root.resolve("fs");
        String mountinfo = cgroup1(31, fs.resolve("cpu,cpuacct"), "cpu,cpuacct") + cgroup1(32, fs.resolve("memory"), "memory")
                + cgroup1(33, fs.resolve("pids"), "pids") + cgroup1(34, fs.resolve("devices"), "devices")
                + cgroup1(35, fs.resolve("freezer"), "freezer") + cgroup1(36, fs.resolve("systemd"), "xattr,name=systemd");
        CgroupLayout l = CgroupLayout.detect(mountinfo, "5:memory:/user.slice\n4:cpu,cpuacct:/\n1:name=systemd:/\n");

        assertThat(l.mode()).isEqualTo("v1");
        assertThat(l.v1Mounts()).containsEntry("cpu", fs.resolve("cpu,cpuacct")).containsEntry("memory", fs.resolve("memory"))
                .containsEntry("devices", fs.resolve("devices")).containsEntry("freezer", fs.resolve("freezer")).hasSize(5);
        assertThat(l.hierarchyOf("cpu")).isEqualTo("v1");
        assertThat(l.v2Mount()).isNull();
    }

    @Test
    void hybridTakesControllersFromV1AndKeepsTheUnifiedMountForTheDeviceFilter() throws Exception {
        Path fs = root.resolve("fs");
        Path unified = fs.resolve("unified");
        Files.createDirectories(unified);
        Files.writeString(unified.resolve("cgroup.controllers"), "hugetlb\n"); // as on this project's CI machines
        String mountinfo = cgroup1(31, fs.resolve("cpu"), "cpu") + cgroup1(32, fs.resolve("memory"), "memory")
                + cgroup1(33, fs.resolve("devices"), "devices") + cgroup2(40, unified, "rw,nosuid,nodev,noexec,relatime");
        CgroupLayout l = CgroupLayout.detect(mountinfo, "4:memory:/process_api/9b1b\n0::/\n");

        assertThat(l.mode()).isEqualTo("hybrid");
        assertThat(l.v2Base()).as("the agent sits at the v2 root").isEqualTo(unified);
        assertThat(l.hierarchyOf("cpu")).isEqualTo("v1");
        assertThat(l.hierarchyOf("memory")).isEqualTo("v1");
        assertThat(l.hierarchyOf("pids")).isNull();
        assertThat(l.withoutV1().mode()).isEqualTo("v2");
        assertThat(l.withoutV2().mode()).isEqualTo("v1");
    }

    @Test
    void noneWithoutCgroupMountsAndReadOnlyMountsAreNotedNotUsed() {
        CgroupLayout none = CgroupLayout.detect("22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n", "0::/\n");
        assertThat(none.mode()).isEqualTo("none");

        CgroupLayout ro = CgroupLayout.detect(cgroup2(30, root.resolve("cg"), "ro,nosuid,nodev"), "0::/\n");
        assertThat(ro.mode()).isEqualTo("none");
        assertThat(ro.notes()).singleElement().asString().contains("read-only");
    }

    @Test
    void mountPointsWithEscapedSpacesAreDecoded() {
        Path spaced = root.resolve("cg roup");
        String line = "30 25 0:30 / " + spaced.toString().replace(" ", "\\040") + " rw shared:4 - cgroup cgroup rw,memory\n";
        assertThat(CgroupLayout.detect(line, "").v1Mounts()).containsEntry("memory", spaced);
    }
}
