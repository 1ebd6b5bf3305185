package io.gpupool.agent.run;

import io.gpupool.agent.confine.Confinement;
import io.gpupool.agent.confine.DeviceNodes;
import io.gpupool.agent.protocol.JobLaunch;
import io.gpupool.agent.protocol.JobPhase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.FileInputStream;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static io.gpupool.agent.run.Jobs.await;
import static io.gpupool.agent.run.Jobs.eventually;
import static io.gpupool.agent.run.Jobs.printed;
import static io.gpupool.agent.run.Jobs.sh;
import static io.gpupool.agent.run.Jobs.started;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * What a job's process gets from the way the agent starts it ({@link JobSpawner}): a session of its own, its logs and
 * nothing else of the agent's (no descriptor, no blocked signal), its own account, and an exit code even when its
 * wrapper is killed. Each runs with posix_spawn (where this machine's C library has it) and with the ProcessBuilder
 * fallback.
 */
class JobSpawnTest {

    @TempDir
    Path work;
    RecordingListener events = new RecordingListener();
    JobRunner runner;

    @AfterEach
    void close() throws Exception {
        if (runner == null) return;
        runner.stopAll("test over", Duration.ofSeconds(5));
        runner.close();
    }

    /** One way to start a job: a spawner, a wrapper, and the runner's work directory (where the wrapper was installed). */
    private record Way(JobSpawner spawner, JobWrapper wrapper, Path workDir) {
        String description() {
            return spawner.description() + " in " + wrapper.description();
        }
    }

    private JobRunner runner(Way way, RunnerConfig config) throws Exception {
        runner = new JobRunner(config.withKillGrace(Duration.ofMillis(300)), List.of(), events,
                Confinement.off("not in this test", DeviceNodes.system()), way.spawner(), way.wrapper());
        return runner;
    }

    private JobRunner runner(Way way) throws Exception {
        return runner(way, RunnerConfig.defaults(way.workDir()));
    }

    private static List<JobSpawner> spawners() {
        JobSpawner fallback = new JobSpawner.Jdk("fallback under test", JobWrapper.findSetsid());
        return PosixSpawn.unavailableReason() == null ? List.of(new JobSpawner.Posix(), fallback) : List.of(fallback);
    }

    /** Every spawner with every wrapper, each in a directory of its own under {@code base}. */
    private static List<Way> ways(Path base) throws Exception {
        List<Way> ways = new java.util.ArrayList<>();
        for (JobSpawner spawner : spawners()) {
            Path spawnerDir = Files.createDirectories(base.resolve(spawner.getClass().getSimpleName()));
            Files.setPosixFilePermissions(spawnerDir, PosixFilePermissions.fromString("rwx--x--x"));
            for (String kind : List.of("native", "shell")) {
                Path dir = Files.createDirectories(spawnerDir.resolve(kind));
                Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx--x--x"));
                Jobs.wrappers(dir).stream().filter(w -> (w instanceof NativeWrapper) == kind.equals("native"))
                        .forEach(w -> ways.add(new Way(spawner, w, dir)));
            }
        }
        return ways;
    }

    @Test
    void glibc_2_34_or_newer_spawns_with_posix_spawn() {
        Optional<String> glibc = glibcVersion();
        assumeTrue(glibc.isPresent(), "not glibc");
        String[] v = glibc.get().split("\\.");
        assumeTrue(Integer.parseInt(v[0]) > 2 || Integer.parseInt(v[1]) >= 34, "glibc " + glibc.get() + " lacks addclosefrom_np");
        assertThat(PosixSpawn.unavailableReason()).isNull();
        assertThat(JobSpawner.forThisMachine()).isInstanceOf(JobSpawner.Posix.class);
        assertThat(JobSpawner.forThisMachine().description()).startsWith("posix_spawn");
    }

    @Test
    void the_job_leads_its_own_session_and_its_command_stays_in_it() throws Exception {
        long agentSession = ProcFs.sessionId(ProcessHandle.current().pid()).orElseThrow();
        for (Way way : ways(work)) {
            runner(way);
            RunningJob job = started(runner.start(sh("session", "echo ready; exec sleep 30")));
            assertThat(eventually(Duration.ofSeconds(5), () -> printed(job, "ready"))).isTrue();
            long command = job.handle().children().findFirst().orElseThrow().pid();
            assertThat(ProcFs.sessionId(job.pid())).as(way.description()).hasValue(job.pid());
            assertThat(ProcFs.sessionId(command)).as("the command, " + way.description()).hasValue(job.pid());
            assertThat(job.pid()).isNotEqualTo(agentSession);
            runner.stop(job.key(), JobPhase.STOPPED, "stopped: test");
            assertThat(await(job).exitCode()).isEqualTo(143);
            runner.close();
        }
    }

    @Test
    void the_job_gets_its_logs_dev_null_and_no_other_descriptor_nor_a_blocked_signal() throws Exception {
        // the JDK opens files without O_CLOEXEC: this one is open in the agent while it spawns
        try (FileInputStream held = new FileInputStream("/etc/hostname")) {
            for (Way way : ways(work)) {
                JobSpawner spawner = way.spawner();
                runner(way);
                RunningJob job = started(runner.start(sh("fds", "echo out; echo err >&2; exec sleep 30")));
                assertThat(eventually(Duration.ofSeconds(5), () -> printed(job, "out"))).isTrue();
                long command = job.handle().children().findFirst().orElseThrow().pid();
                Map<String, String> expected = Map.of("0", "/dev/null", "1", job.directory().stdout().toString(), "2", job.directory().stderr().toString());
                for (long pid : List.of(job.pid(), command)) {
                    String which = (pid == command ? "the command, " : "the wrapper, ") + way.description();
                    // "out" is printed before the shell execs sleep, whose start-up (setlocale) holds locale files open for
                    // a moment: wait for the settled set (a leaked descriptor stays, and fails this)
                    eventually(Duration.ofSeconds(5), () -> {
                        try {
                            return descriptors(pid).equals(expected);
                        } catch (Exception e) {
                            return false;
                        }
                    });
                    assertThat(descriptors(pid)).as(which).isEqualTo(expected);
                    assertThat(status(pid, "SigBlk")).as(which).isEqualTo("0000000000000000");
                }
                // none of the standard signals ignored (glibc's posix_spawn, the JDK's too, leaves its own two internal
                // real-time signals, 32 and 33, ignored; every glibc program installs its handlers for them at start-up).
                // posix_spawn resets every disposition; a JDK child keeps what the agent's own process ignores (a nohup'ed
                // agent ignores SIGHUP), so the fallback is held to that
                long allowed = spawner instanceof JobSpawner.Posix ? 0 : Long.parseLong(status(ProcessHandle.current().pid(), "SigIgn"), 16);
                assertThat(Long.parseLong(status(command, "SigIgn"), 16) & 0x7fffffffL & ~allowed).as("the command, " + way.description()).isZero();
                runner.stop(job.key(), JobPhase.STOPPED, "stopped: test");
                await(job);
                assertThat(Files.readString(job.directory().stdout())).isEqualTo("out\n");
                assertThat(Files.readString(job.directory().stderr())).startsWith("err\n"); // then the shell wrapper's "Terminated"
                runner.close();
            }
        }
    }

    @Test
    void the_command_is_found_in_the_jobs_PATH_and_a_script_without_a_shebang_runs_with_sh() throws Exception {
        Path bin = Files.createDirectories(work.resolve("bin-of-the-job"));
        Path script = bin.resolve("no-shebang");
        Files.writeString(script, "echo \"from the script: $*\"\n");
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path notExecutable = bin.resolve("not-executable");
        Files.writeString(notExecutable, "echo never\n");
        Map<String, String> path = Map.of("PATH", bin + ":/usr/bin:/bin");
        for (Way way : ways(work)) {
            runner(way);
            RunningJob byName = started(runner.start(new JobLaunch("by-name", 0, List.of("no-shebang", "a", "b"), path, null, List.of())));
            assertThat(await(byName).exitCode()).as(way.description()).isZero();
            assertThat(Files.readString(byName.directory().stdout())).as(way.description()).isEqualTo("from the script: a b\n");
            RunningJob byPath = started(runner.start(new JobLaunch("by-path", 0, List.of(script.toString(), "c"), Map.of(), null, List.of())));
            assertThat(await(byPath).exitCode()).as(way.description()).isZero();
            assertThat(Files.readString(byPath.directory().stdout())).isEqualTo("from the script: c\n");
            RunningJob missing = started(runner.start(new JobLaunch("missing", 0, List.of("no-such-command-here"), path, null, List.of())));
            assertThat(await(missing).exitCode()).as(way.description()).isEqualTo(127);
            RunningJob denied = started(runner.start(new JobLaunch("denied", 0, List.of("not-executable"), path, null, List.of())));
            // found but not executable: 126 as env(1) and execvp give it (dash, the shell wrapper's sh, says 127)
            assertThat(await(denied).exitCode()).as(way.description()).isEqualTo(way.wrapper() instanceof NativeWrapper ? 126 : 127);
            runner.close();
        }
    }

    @Test
    void a_wrapper_killed_outside_the_agent_is_reaped_with_its_signal_as_exit_code() throws Exception {
        for (Way way : ways(work)) {
            runner(way);
            RunningJob job = started(runner.start(sh("killed", "echo ready; exec sleep 30")));
            assertThat(eventually(Duration.ofSeconds(5), () -> printed(job, "ready"))).isTrue();
            ProcessSignals.signalProcess(job.pid(), ProcessSignals.SIGKILL); // the wrapper alone: it writes no exit file
            JobEnd end = await(job);
            assertThat(end.exitCode()).as(way.description()).isEqualTo(137);
            assertThat(end.phase()).isEqualTo(JobPhase.FAILED);
            assertThat(ProcessHandle.of(job.pid())).as("reaped, no zombie left").isEmpty();
            runner.close();
        }
    }

    @Test
    void a_root_agent_runs_the_command_as_its_account_and_only_the_wrapper_as_root() throws Exception {
        assumeTrue(UnixAccount.effectiveUid() == 0, "only root switches accounts");
        assumeTrue(ShellWrapper.onThisMachine("test").cannotSwitchReason() == null, "setpriv is missing");
        UnixAccount nobody = UnixAccount.lookup("nobody").orElseThrow();
        String groups = String.join(" ", nobody.groups().stream().map(String::valueOf).toList());
        // every account may pass through to the job directories (a JUnit @TempDir is 0700), as through /var/lib
        Files.setPosixFilePermissions(work, PosixFilePermissions.fromString("rwx--x--x"));
        for (Way way : ways(work)) {
            runner(way, RunnerConfig.defaults(way.workDir()).withAccounts("nobody", false));
            String tricky = "it's \"quoted\"\n$HOME `id` \\ end";
            RunningJob job = started(runner.start(new JobLaunch("own", 0,
                    List.of("sh", "-c", "id -u; id -G; pwd; printf '%s|\\n' \"$JOB_TRICKY\"; echo \"$JOB_SECRET\"; exec sleep 30"),
                    Map.of("JOB_SECRET", "secret-value", "JOB_TRICKY", tricky), null, List.of())));
            assertThat(eventually(Duration.ofSeconds(5), () -> printed(job, "secret-value\n"))).isTrue();
            assertThat(Files.readString(job.directory().stdout())).as(way.description())
                    .isEqualTo(nobody.uid() + "\n" + groups + "\n" + job.directory().work() + "\n" + tricky + "|\nsecret-value\n");
            assertThat(status(job.pid(), "Uid")).as("the wrapper").startsWith("0\t0\t0\t0");
            // the job's files are the account's alone; the attempt's directory and records stay root's, open by name only
            for (Path own : List.of(job.directory().stdout(), job.directory().stderr(), job.directory().work())) {
                assertThat((int) Files.getAttribute(own, "unix:uid")).as(own + ", " + way.description()).isEqualTo(nobody.uid());
                assertThat((int) Files.getAttribute(own, "unix:gid")).as(own + ", " + way.description()).isEqualTo(nobody.gid());
                assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(own))).as(own + ", " + way.description())
                        .isEqualTo(Files.isDirectory(own) ? "rwx------" : "rw-------");
            }
            assertThat((int) Files.getAttribute(job.directory().path(), "unix:uid")).isZero();
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(job.directory().path()))).isEqualTo("rwx--x--x");
            assertThat((int) Files.getAttribute(job.directory().path().resolve(JobDirectory.PID), "unix:uid")).isZero();
            // nothing the job chose reaches what runs as root, nor the command line every account can read
            assertThat(Files.readString(Path.of("/proc", Long.toString(job.pid()), "environ"))).as("the wrapper's environment, " + way.description())
                    .doesNotContain("JOB_SECRET");
            assertThat(Files.readString(Path.of("/proc", Long.toString(job.pid()), "cmdline"))).as("the wrapper's command line, " + way.description())
                    .contains(job.directory().path().toString()).doesNotContain("secret-value");
            long command = job.handle().children().findFirst().orElseThrow().pid();
            assertThat(status(command, "Uid")).as("the command").isEqualTo(nobody.uid() + "\t" + nobody.uid() + "\t" + nobody.uid() + "\t" + nobody.uid());
            assertThat(status(command, "Gid")).as("the command").isEqualTo(nobody.gid() + "\t" + nobody.gid() + "\t" + nobody.gid() + "\t" + nobody.gid());
            for (String set : List.of("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")) {
                assertThat(status(command, set)).as("no capability left: " + set + ", " + way.description()).isEqualTo("0000000000000000");
            }
            runner.stop(job.key(), JobPhase.STOPPED, "stopped: test");
            assertThat(await(job).exitCode()).isEqualTo(143);
            // the command's environment is the job's alone: nothing of the wrappers' own (a shell's PWD, root's PATH)
            RunningJob env = started(runner.start(new JobLaunch("env", 0, List.of("/usr/bin/env"), Map.of("JOB_SECRET", "s"), null, List.of())));
            assertThat(await(env).exitCode()).isZero();
            List<String> names = Files.readAllLines(env.directory().stdout()).stream().map(l -> l.substring(0, l.indexOf('='))).toList();
            assertThat(names).as(way.description()).contains("JOB_SECRET", "HOME", "USER", "GPUPOOL_JOB_ID").doesNotContain("PWD", "OLDPWD");
            // a directory root may enter but the account may not stays closed: the account itself enters it
            Path closed = Files.createDirectories(way.workDir().resolve("root-only"));
            Files.setPosixFilePermissions(closed, PosixFilePermissions.fromString("rwx------"));
            RunningJob refused = started(runner.start(new JobLaunch("closed", 0, List.of("sh", "-c", "echo ran"), Map.of(),
                    closed.toString(), List.of())));
            JobEnd end = await(refused);
            assertThat(end.phase()).isEqualTo(JobPhase.FAILED);
            assertThat(end.exitCode()).as(way.description()).isEqualTo(125); // the wrapper's own failure, before the command
            assertThat(Files.readString(refused.directory().stdout())).isEmpty();
            assertThat(Files.readString(refused.directory().stderr())).contains("Permission denied");
            runner.close();
        }
    }

    /** fd number to what it points at, for process {@code pid}. */
    private static Map<String, String> descriptors(long pid) throws Exception {
        try (Stream<Path> fds = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
            return fds.collect(Collectors.toMap(p -> p.getFileName().toString(), p -> {
                try {
                    return Files.readSymbolicLink(p).toString();
                } catch (Exception e) {
                    return "?";
                }
            }));
        }
    }

    private static String status(long pid, String field) throws Exception {
        return Files.readAllLines(Path.of("/proc", Long.toString(pid), "status")).stream()
                .filter(l -> l.startsWith(field + ":")).map(l -> l.substring(field.length() + 1).strip()).findFirst().orElseThrow();
    }

    /** glibc's version ("2.36"), asked from the C library itself; empty where it is not glibc. */
    private static Optional<String> glibcVersion() {
        return Linker.nativeLinker().defaultLookup().find("gnu_get_libc_version").map(s -> {
            try {
                MemorySegment v = (MemorySegment) Linker.nativeLinker().downcallHandle(s, FunctionDescriptor.of(ADDRESS)).invokeExact();
                return v.reinterpret(32).getString(0);
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
        });
    }
}
