package io.gpupool.agent.confine;

import io.gpupool.agent.protocol.NodeConfinement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** What a node says it enforces, from layouts on made-up trees (setting up writes, so as root only). */
class ConfinementTest {

    @TempDir
    Path root;

    @Test
    void pureV2EnablesTheControllersOnTheWayDownAndSaysWhatItLacks() throws Exception {
        assumeTrue(ConfinedCgroups.isRoot(), "setting up the node's groups runs as root only");
        Path mount = root.resolve("cgroup");
        Path base = mount.resolve("system.slice");
        Files.createDirectories(base.resolve("gpupool-agent.service"));
        Files.writeString(base.resolve("cgroup.controllers"), "cpu memory pids\n");
        Files.writeString(base.resolve("cgroup.subtree_control"), "memory\n");
        // the levels gpupool makes are plain directories here: give them the control file the kernel would
        Files.createDirectories(base.resolve("gpupool/n1"));
        Files.writeString(base.resolve("gpupool/cgroup.subtree_control"), "");
        Files.writeString(base.resolve("gpupool/n1/cgroup.subtree_control"), "");
        CgroupLayout layout = CgroupLayout.detect("30 25 0:30 / " + mount + " rw shared:4 - cgroup2 cgroup2 rw\n",
                "0::/system.slice/gpupool-agent.service\n");

        Confinement c = Confinement.open(layout, "n1", DeviceNodes.fake(root.resolve("dev")), 100);

        NodeConfinement d = c.description();
        assertThat(d.mode()).isEqualTo("v2");
        assertThat(d.enforced()).contains("cpu(v2)", "memory(v2)", "pids(v2)");
        // a plain directory takes no BPF program, has no cgroup.kill and no memory.swap.max: each is listed as missing
        assertThat(d.missing()).anyMatch(m -> m.startsWith("devices(bpf): bpf(BPF_PROG_ATTACH"))
                .anyMatch(m -> m.startsWith("kill:")).anyMatch(m -> m.startsWith("swap:"));
        // one write per controller missing from a level (a plain file keeps the last one written)
        assertThat(Files.readString(base.resolve("cgroup.subtree_control"))).isEqualTo("+pids");
        assertThat(Files.readString(base.resolve("gpupool/n1/cgroup.subtree_control"))).isEqualTo("+pids");
        assertThat(d.summary()).startsWith("v2: cpu(v2) memory(v2) pids(v2)");
    }

    @Test
    void withoutCgroupsTheNodeSaysNoneAndWhy() {
        Confinement c = Confinement.open(CgroupLayout.detect("", ""), "n1", DeviceNodes.fake(root), 0);
        assertThat(c.active()).isFalse();
        assertThat(c.description().summary()).isEqualTo("none (no cgroup file system is mounted)");
        assertThat(Confinement.off("turned off (--no-confine)", DeviceNodes.fake(root)).description().reason()).contains("--no-confine");
    }

    @Test
    void anAttemptGetsADirectoryUnderEachParent() throws Exception {
        assumeTrue(ConfinedCgroups.isRoot(), "setting up the node's groups runs as root only");
        Path fs = root.resolve("fs");
        String mountinfo = "31 25 0:31 / " + fs.resolve("memory") + " rw shared:9 - cgroup cgroup rw,memory\n"
                + "32 25 0:32 / " + fs.resolve("pids") + " rw shared:9 - cgroup cgroup rw,pids\n";
        Confinement c = Confinement.open(CgroupLayout.detect(mountinfo, ""), "n1", DeviceNodes.fake(root), 64);
        assertThat(c.description().enforced()).contains("memory(v1)", "pids(v1)");
        AttemptCgroup cg = c.create("j.1", 0, 32, List.of()).orElseThrow();
        assertThat(cg.dirs()).extracting(AttemptCgroup.Dir::path)
                .containsExactly(fs.resolve("memory/gpupool/n1/j.1"), fs.resolve("pids/gpupool/n1/j.1"));
        assertThat(Files.readString(fs.resolve("pids/gpupool/n1/j.1/pids.max"))).isEqualTo("64");
    }
}
