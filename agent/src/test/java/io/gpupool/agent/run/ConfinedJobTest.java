package io.gpupool.agent.run;

import io.gpupool.agent.confine.AttemptCgroup;
import io.gpupool.agent.confine.CgroupLayout;
import io.gpupool.agent.confine.ConfinedCgroups;
import io.gpupool.agent.confine.Confinement;
import io.gpupool.agent.confine.DeviceNodes;
import io.gpupool.agent.gpu.FakeGpuBackend;
import io.gpupool.agent.protocol.GpuInfo;
import io.gpupool.agent.protocol.GrantedGpu;
import io.gpupool.agent.protocol.JobLaunch;
import io.gpupool.agent.protocol.JobPhase;
import io.gpupool.model.HostResources;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static io.gpupool.agent.run.Jobs.await;
import static io.gpupool.agent.run.Jobs.eventually;
import static io.gpupool.agent.run.Jobs.started;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Jobs in real cgroups on this machine (hybrid: v1 controllers and a cgroup2 mount without controllers), as root. Each
 * test makes its own node's groups and removes them afterwards, whatever happened.
 *
 * <p>The device tests use fake GPUs with real device nodes (major 195, NVIDIA's). There is no NVIDIA driver here, so
 * opening a node the filter lets through fails with ENXIO ("No such device or address": the driver is missing) while a
 * node the filter refuses fails with EPERM ("Operation not permitted") before the driver would be asked. That
 * difference is what proves the filter without a GPU.
 */
class ConfinedJobTest {

    @TempDir
    Path work;
    @TempDir
    Path devDir;

    ConfinedCgroups cgroups;
    DeviceNodes devices;
    List<GpuInfo> gpus = new FakeGpuBackend("2xA100-80GB", "confined").discover().gpus();
    RecordingListener events = new RecordingListener();
    JobRunner runner;

    @BeforeEach
    void setUp() throws Exception {
        // (JUnit's assumptions: AssertJ's generate a proxy class per type, seconds on a busy machine)
        assumeTrue(ConfinedCgroups.isRoot(), "cgroups are made by root only; run the agent tests as root to check confinement");
        cgroups = new ConfinedCgroups();
        assumeTrue(!cgroups.layout.mode().equals("none"), "no cgroup file system is mounted here");
        devices = DeviceNodes.createFake(devDir, 2);
    }

    @AfterEach
    void tearDown() throws Exception {
        try {
            if (runner != null) {
                runner.stopAll("test over", Duration.ofSeconds(5));
                runner.close();
            }
        } finally {
            if (cgroups != null) cgroups.close();
        }
    }

    private Confinement runnerWith(CgroupLayout layout) throws IOException {
        Confinement c = Confinement.open(layout, cgroups.node, devices, 256);
        runner = new JobRunner(RunnerConfig.defaults(work).withKillGrace(Duration.ofMillis(300)), gpus, events, c);
        return c;
    }

    /** Runs a job granted GPU 0 that opens both fake GPUs' nodes; returns its stdout and stderr. */
    private String[] openBothGpus() throws Exception {
        return openBothGpus("dev", 0);
    }

    /** Runs job {@code id} granted GPU {@code granted}, opening both fake GPUs' nodes; returns its stdout and stderr. */
    private String[] openBothGpus(String id, int granted) throws Exception {
        JobLaunch l = new JobLaunch(id, 0, List.of("sh", "-c", "echo \"$GPUPOOL_DEVICE_NODES\"; cat " + devices.gpuNode(0)
                + "; cat " + devices.gpuNode(1) + "; true"), Map.of(), null, List.of(GrantedGpu.whole(gpus.get(granted).uuid())));
        JobEnd end = await(started(runner.start(l)));
        assertThat(end.phase()).as(end.message()).isEqualTo(JobPhase.SUCCEEDED);
        JobDirectory dir = runner.store().find(l.key()).orElseThrow();
        return new String[] {Files.readString(dir.stdout()), Files.readString(dir.stderr())};
    }

    private void assertOnlyGpu0PassesTheFilter(String[] out) throws IOException {
        assertOnlyThatGpuPassesTheFilter(out, 0);
    }

    private void assertOnlyThatGpuPassesTheFilter(String[] out, int granted) throws IOException {
        assertThat(out[0]).isEqualTo(devices.gpuNode(granted) + "\n");
        assertThat(out[1]).contains(devices.gpuNode(granted) + ": No such device or address")
                .contains(devices.gpuNode(1 - granted) + ": Operation not permitted");
        assertThat(cgroups.leftoverGroups()).as("the attempt's groups are removed").isEmpty();
    }

    @Test
    void unconfinedBothNodesReachTheMissingDriver() throws Exception {
        runner = new JobRunner(RunnerConfig.defaults(work), gpus, events, Confinement.off("test", devices));
        String[] out = openBothGpus();
        assertThat(out[1]).contains(devices.gpuNode(0) + ": No such device or address")
                .contains(devices.gpuNode(1) + ": No such device or address");
    }

    @Test
    void theV2BpfFilterAloneAllowsOnlyTheGrantedGpu() throws Exception {
        assumeTrue(cgroups.layout.v2Mount() != null, "no cgroup2 mount");
        Confinement c = runnerWith(cgroups.layout.withoutV1());
        assertThat(c.description().enforced()).contains("devices(bpf)").doesNotContain("devices(v1)");
        assertOnlyGpu0PassesTheFilter(openBothGpus());
    }

    @Test
    void aReusedBpfFilterStillAllowsEachJobOnlyItsOwnGpu() throws Exception {
        assumeTrue(cgroups.layout.v2Mount() != null, "no cgroup2 mount");
        runnerWith(cgroups.layout.withoutV1());
        // GPU 0, GPU 1, GPU 0 again: the third start attaches the program the first one loaded
        assertOnlyThatGpuPassesTheFilter(openBothGpus("first", 0), 0);
        int loaded = Confinement.deviceFiltersLoaded();
        assertOnlyThatGpuPassesTheFilter(openBothGpus("second", 1), 1);
        int afterSecond = Confinement.deviceFiltersLoaded();
        assertThat(afterSecond).as("at most one more program: GPU 1's").isBetween(loaded, loaded + 1);
        assertOnlyThatGpuPassesTheFilter(openBothGpus("third", 0), 0);
        assertThat(Confinement.deviceFiltersLoaded()).as("the first job's program is attached again, not loaded again").isEqualTo(afterSecond);
    }

    @Test
    void theV1DevicesControllerAloneAllowsOnlyTheGrantedGpu() throws Exception {
        assumeTrue(cgroups.layout.v1Mounts().containsKey("devices"), "no v1 devices controller");
        Confinement c = runnerWith(cgroups.layout.withoutV2());
        assertThat(c.description().enforced()).contains("devices(v1)").doesNotContain("devices(bpf)");
        assertOnlyGpu0PassesTheFilter(openBothGpus());
    }

    @Test
    void bothTogetherAsDetected() throws Exception {
        Confinement c = runnerWith(cgroups.layout);
        if (cgroups.layout.mode().equals("hybrid")) assertThat(c.description().enforced()).contains("devices(v1)", "devices(bpf)");
        assertOnlyGpu0PassesTheFilter(openBothGpus());
    }

    @Test
    void aJobUnderItsOwnAccountIsConfinedAlike() throws Exception {
        // every account may pass through these directories (a JUnit @TempDir is 0700), as through an agent's /var/lib
        Path open = Files.createDirectories(work.resolve("open"));
        Files.setPosixFilePermissions(work, PosixFilePermissions.fromString("rwx--x--x"));
        Files.setPosixFilePermissions(devDir, PosixFilePermissions.fromString("rwx--x--x"));
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwx--x--x"));
        Confinement c = Confinement.open(cgroups.layout, cgroups.node, devices, 256);
        runner = new JobRunner(RunnerConfig.defaults(open).withKillGrace(Duration.ofMillis(300)).withAccounts("nobody", false), gpus, events, c);
        JobLaunch l = new JobLaunch("own", 0, List.of("sh", "-c", "id -u; cat " + devices.gpuNode(0) + "; cat " + devices.gpuNode(1) + "; true"),
                Map.of(), null, List.of(GrantedGpu.whole(gpus.get(0).uuid())));
        JobEnd end = await(started(runner.start(l)));
        assertThat(end.phase()).as(end.message()).isEqualTo(JobPhase.SUCCEEDED);
        JobDirectory dir = runner.store().find(l.key()).orElseThrow();
        assertThat(Files.readString(dir.stdout())).isEqualTo("65534\n");
        assertThat(Files.readString(dir.stderr())).contains(devices.gpuNode(0) + ": No such device or address")
                .contains(devices.gpuNode(1) + ": Operation not permitted");
    }

    @Test
    void aJobOverItsHostMemoryIsKilledAndReportedSo() throws Exception {
        Confinement c = runnerWith(cgroups.layout);
        assumeTrue(c.description().enforced().stream().anyMatch(e -> e.startsWith("memory(")), "no memory controller");
        // tail keeps the last "line" of 200 MiB of zeros, which has no newline: it really allocates all of it
        JobLaunch l = new JobLaunch("oom", 0, List.of("sh", "-c", "head -c 200M /dev/zero | tail"), Map.of(), null, List.of(),
                new HostResources(0, 64), null);
        JobEnd end = await(started(runner.start(l)));
        assertThat(end.phase()).isEqualTo(JobPhase.FAILED);
        assertThat(end.message()).startsWith("killed: out of host memory, limit 64 MiB");
        assertThat(cgroups.leftoverGroups()).isEmpty();
    }

    @Test
    void aCancelledJobLeavesNoDaemonBehind() throws Exception {
        assertCancelLeavesNoDaemon(cgroups.layout, "kill(cgroup.kill)");
    }

    @Test
    void theV1FreezerKillsTheDaemonWhereThereIsNoCgroupKill() throws Exception {
        assumeTrue(cgroups.layout.v1Mounts().containsKey("freezer"), "no v1 freezer");
        assertCancelLeavesNoDaemon(cgroups.layout.withoutV2(), "kill(freezer)");
    }

    private void assertCancelLeavesNoDaemon(CgroupLayout layout, String kill) throws Exception {
        Confinement c = runnerWith(layout);
        assumeTrue(c.description().enforced().contains(kill), "this node kills with another mechanism: " + c.description());
        Path pidFile = work.resolve("daemon.pid");
        // the subshell exits at once: its sleep is re-parented, in a session and process group of its own
        JobLaunch l = new JobLaunch("daemon", 0, List.of("sh", "-c", "(setsid sleep 1000 & echo $! > " + pidFile + "); exec sleep 1000"),
                Map.of(), null, List.of());
        RunningJob job = started(runner.start(l));
        assertThat(eventually(Duration.ofSeconds(5), () -> readPid(pidFile) > 0 && sessionOf(readPid(pidFile)) == readPid(pidFile))).isTrue();
        long daemon = readPid(pidFile);
        assertThat(sessionOf(daemon)).as("outside the job's session: a process-group kill misses it").isNotEqualTo(job.pid());

        runner.stop(job.key(), JobPhase.STOPPED, "cancelled");
        JobEnd end = await(job);

        assertThat(end.phase()).isEqualTo(JobPhase.STOPPED);
        assertThat(alive(daemon)).as("the daemon went with the job's cgroup").isFalse();
        assertThat(cgroups.leftoverGroups()).isEmpty();
    }

    @Test
    void limitsComeFromTheJobsHostResourcesAndTheJobStartsInsideItsGroups() throws Exception {
        runnerWith(cgroups.layout);
        JobLaunch l = new JobLaunch("limits", 0, List.of("sh", "-c", "cat /proc/self/cgroup; exec sleep 1000"), Map.of(), null, List.of(),
                new HostResources(1500, 256), null);
        RunningJob job = started(runner.start(l));
        JobDirectory dir = job.directory();
        String name = dir.path().getFileName().toString();
        assertThat(eventually(Duration.ofSeconds(5), () -> read(dir.stdout()).contains("/" + name))).isTrue();
        List<AttemptCgroup.Dir> dirs = AttemptCgroup.read(dir.path(), 256).orElseThrow().dirs();
        for (AttemptCgroup.Dir d : dirs) {
            // every hierarchy's line of the job's /proc/self/cgroup names its attempt group
            assertThat(read(dir.stdout())).contains("/gpupool/" + cgroups.node + "/" + name + "\n");
            if (d.hierarchy().equals("v1") && d.controllers().contains("cpu")) {
                assertThat(read(d.path().resolve("cpu.cfs_quota_us")).trim()).isEqualTo("150000");
                assertThat(read(d.path().resolve("cpu.cfs_period_us")).trim()).isEqualTo("100000");
            }
            if (d.hierarchy().equals("v2") && d.controllers().contains("cpu")) {
                assertThat(read(d.path().resolve("cpu.max")).trim()).isEqualTo("150000 100000");
            }
            if (d.hierarchy().equals("v1") && d.controllers().contains("memory")) {
                assertThat(read(d.path().resolve("memory.limit_in_bytes")).trim()).isEqualTo(Long.toString(256L << 20));
                if (Files.exists(d.path().resolve("memory.memsw.limit_in_bytes"))) {
                    assertThat(read(d.path().resolve("memory.memsw.limit_in_bytes")).trim()).isEqualTo(Long.toString(256L << 20));
                }
            }
            if (d.controllers().contains("pids")) assertThat(read(d.path().resolve("pids.max")).trim()).isEqualTo("256");
        }
        runner.stop(job.key(), JobPhase.STOPPED, "test over");
        await(job);
        assertThat(cgroups.leftoverGroups()).isEmpty();
    }

    @Test
    void theFenceKeeperKillsTheCgroupOfAJobItFencesWithTheAgentGone() throws Exception {
        Confinement c = runnerWith(cgroups.layout);
        assumeTrue(c.description().enforced().contains("kill(cgroup.kill)"), "the keeper kills cgroups through cgroup.kill only");
        Path pidFile = work.resolve("daemon.pid");
        JobLaunch l = new JobLaunch("fenced", 0, List.of("sh", "-c", "(setsid sleep 1000 & echo $! > " + pidFile + "); exec sleep 1000"),
                Map.of(), null, List.of());
        started(runner.start(l));
        assertThat(eventually(Duration.ofSeconds(5), () -> readPid(pidFile) > 0 && sessionOf(readPid(pidFile)) == readPid(pidFile))).isTrue();
        long daemon = readPid(pidFile);
        runner.close(); // the agent is gone: nothing but the keeper acts now

        FenceKeeper keeper = new FenceKeeper(work, Duration.ofMillis(200));
        try {
            keeper.renew(System.nanoTime() + 200_000_000L); // a lease that runs out in 0.2 s and is never renewed
            assertThat(eventually(Duration.ofSeconds(10), () -> {
                try {
                    return !alive(daemon);
                } catch (IOException e) {
                    return false;
                }
            })).as("the keeper's SIGKILL step reached the daemon through cgroup.kill").isTrue();
        } finally {
            keeper.process().ifPresent(ProcessHandle::destroyForcibly);
        }
        // the next agent process finds the fenced end and removes the groups
        runner = new JobRunner(RunnerConfig.defaults(work).withKillGrace(Duration.ofMillis(300)), gpus, events, c);
        assertThat(runner.recover()).isEmpty();
        assertThat(events.endOf(l.key()).phase()).isEqualTo(JobPhase.STOPPED);
        assertThat(cgroups.leftoverGroups()).isEmpty();
    }

    @Test
    void anAgentRestartFindsTheGroupsOfTheJobsItReadopts() throws Exception {
        Confinement c = runnerWith(cgroups.layout);
        Path pidFile = work.resolve("daemon.pid");
        JobLaunch l = new JobLaunch("readopted", 0, List.of("sh", "-c", "(setsid sleep 1000 & echo $! > " + pidFile + "); exec sleep 1000"),
                Map.of(), null, List.of());
        started(runner.start(l));
        assertThat(eventually(Duration.ofSeconds(5), () -> readPid(pidFile) > 0)).isTrue();
        runner.close(); // the agent goes; the job runs on

        runner = new JobRunner(RunnerConfig.defaults(work).withKillGrace(Duration.ofMillis(300)), gpus, events, c);
        RunningJob again = runner.recover().getFirst();
        runner.stop(again.key(), JobPhase.STOPPED, "cancelled");
        assertThat(await(again).phase()).isEqualTo(JobPhase.STOPPED);
        assertThat(alive(readPid(pidFile))).isFalse();
        assertThat(cgroups.leftoverGroups()).isEmpty();
    }

    private static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (IOException e) {
            return "";
        }
    }

    private static long readPid(Path p) {
        try {
            String s = Files.readString(p).trim();
            return s.isEmpty() ? -1 : Long.parseLong(s);
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
    }

    /** The session of {@code pid}, -1 when gone. */
    private static long sessionOf(long pid) {
        return ProcFs.sessionId(pid).orElse(-1);
    }

    /** Alive: listed in /proc and not a zombie (a killed orphan may wait there for its reaper). */
    private static boolean alive(long pid) throws IOException {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            String state = stat.substring(stat.lastIndexOf(')') + 2).split(" ")[0];
            return !state.equals("Z") && !state.equals("X");
        } catch (NoSuchFileException e) {
            return false;
        }
    }
}
