package io.gpupool.agent.confine;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The files an attempt's limits are written to, on plain directories standing in for cgroup ones (the kernel's side is
 * in ConfinedJobTest). The v2 CPU, memory and pids files are checked only here: this project's machines have no v2
 * controllers.
 */
class AttemptCgroupTest {

    @TempDir
    Path root;

    @Test
    void v2LimitsGoToCpuMaxMemoryMaxAndPidsMax() throws Exception {
        Path dir = root.resolve("j.1");
        AttemptCgroup cg = AttemptCgroup.create(List.of(new AttemptCgroup.Dir("v2", Set.of("cpu", "memory", "pids"), dir)),
                new AttemptCgroup.Limits(1500, 64, 512, null, false));
        assertThat(Files.readString(dir.resolve("cpu.max"))).isEqualTo("150000 100000");
        assertThat(Files.readString(dir.resolve("memory.max"))).isEqualTo(Long.toString(64L << 20));
        assertThat(Files.readString(dir.resolve("pids.max"))).isEqualTo("512");
        assertThat(cg.memoryLimitMib()).isEqualTo(64);
    }

    @Test
    void v1LimitsGoToCfsQuotaMemoryAndSwapAndDeviceLines() throws Exception {
        Path cpu = root.resolve("cpu/j.1"), mem = root.resolve("memory/j.1"), dev = root.resolve("devices/j.1");
        Files.createDirectories(cpu.getParent());
        Files.createDirectories(mem.getParent());
        Files.createDirectories(dev.getParent());
        // memsw exists where swap accounting is on: the kernel makes it with the directory; here the test cannot, so a
        // dry run shows only memory.limit_in_bytes
        AttemptCgroup.create(List.of(new AttemptCgroup.Dir("v1", Set.of("cpu"), cpu), new AttemptCgroup.Dir("v1", Set.of("memory"), mem),
                        new AttemptCgroup.Dir("v1", Set.of("devices"), dev)),
                new AttemptCgroup.Limits(5, 100, 0, List.of(DeviceRule.chr(195, 1, "nvidia1")), false));
        assertThat(Files.readString(cpu.resolve("cpu.cfs_period_us"))).isEqualTo("100000");
        assertThat(Files.readString(cpu.resolve("cpu.cfs_quota_us"))).as("at least the kernel's 1 ms").isEqualTo("1000");
        assertThat(Files.readString(mem.resolve("memory.limit_in_bytes"))).isEqualTo(Long.toString(100L << 20));
        assertThat(mem.resolve("memory.memsw.limit_in_bytes")).doesNotExist();
        assertThat(dev.resolve("pids.max")).doesNotExist();
        // a plain file here: devices.deny's one write is its content, devices.allow's one rule (each its own write) too
        assertThat(Files.readString(dev.resolve("devices.deny"))).isEqualTo("a");
        assertThat(Files.readString(dev.resolve("devices.allow"))).isEqualTo("c 195:1 rwm");
    }

    @Test
    void noHostResourcesMeansNoCpuOrMemoryFiles() throws Exception {
        Path dir = root.resolve("j.2");
        AttemptCgroup.create(List.of(new AttemptCgroup.Dir("v2", Set.of("cpu", "memory", "pids"), dir)), new AttemptCgroup.Limits(0, 0, 0, null, false));
        assertThat(dir).isEmptyDirectory();
    }

    @Test
    void theRecordReadsBackAndAFailedCreationRemovesWhatItMade() throws Exception {
        Path a = root.resolve("a/j.3"), b = root.resolve("b/j.3");
        Files.createDirectories(a.getParent());
        AttemptCgroup cg = AttemptCgroup.create(List.of(new AttemptCgroup.Dir("v2", Set.of(), a)), new AttemptCgroup.Limits(0, 0, 0, null, false));
        Path job = Files.createDirectories(root.resolve("job"));
        cg.writeRecord(job);
        assertThat(Files.readString(job.resolve(AttemptCgroup.RECORD))).isEqualTo("v2 - " + a + "\n");
        assertThat(AttemptCgroup.read(job, 64).orElseThrow().dirs()).isEqualTo(cg.dirs());

        // the second hierarchy's parent is missing: the first directory must not stay behind
        Path c = root.resolve("c/j.4");
        Files.createDirectories(c.getParent());
        assertThatThrownBy(() -> AttemptCgroup.create(List.of(new AttemptCgroup.Dir("v2", Set.of(), c), new AttemptCgroup.Dir("v1", Set.of("memory"), b)),
                new AttemptCgroup.Limits(0, 0, 0, null, false)))
                .hasMessageContaining("mkdir " + b).hasMessageContaining("ENOENT");
        assertThat(c).doesNotExist();
    }
}
