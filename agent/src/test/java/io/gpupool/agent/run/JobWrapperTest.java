package io.gpupool.agent.run;

import io.gpupool.agent.confine.Confinement;
import io.gpupool.agent.confine.DeviceNodes;
import io.gpupool.agent.protocol.JobKey;
import io.gpupool.agent.protocol.JobPhase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static io.gpupool.agent.run.Jobs.await;
import static io.gpupool.agent.run.Jobs.eventually;
import static io.gpupool.agent.run.Jobs.sh;
import static io.gpupool.agent.run.Jobs.started;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The two job wrappers side by side: an agent adopts the jobs the other one started (an upgrade or a downgrade keeps
 * every running job and its exit code), the native one is installed where only the agent may change it, and a job
 * whose environment was cut short runs nothing. (What a job gets from either is in {@link JobSpawnTest}.)
 */
class JobWrapperTest {

    @TempDir
    Path work;
    JobRunner runner;

    @AfterEach
    void close() throws Exception {
        if (runner != null) runner.close();
    }

    private NativeWrapper nativeWrapper(Path workDir) {
        Optional<NativeWrapper> n = Jobs.nativeWrapper(workDir);
        assumeTrue(n.isPresent(), "built without a C compiler");
        return n.get();
    }

    private JobRunner runner(Path workDir, JobWrapper wrapper, RecordingListener events) throws Exception {
        runner = new JobRunner(RunnerConfig.defaults(workDir), List.of(), events, Confinement.off("not in this test", DeviceNodes.system()),
                JobSpawner.forThisMachine(), wrapper);
        return runner;
    }

    @Test
    void an_agent_with_the_other_wrapper_adopts_the_running_jobs_and_reads_their_exit_codes() throws Exception {
        for (boolean upgrade : List.of(true, false)) {
            Path dir = Files.createDirectories(work.resolve(upgrade ? "upgrade" : "downgrade"));
            JobWrapper shell = ShellWrapper.onThisMachine("test");
            JobWrapper nativeOne = nativeWrapper(dir);
            JobWrapper before = upgrade ? shell : nativeOne, after = upgrade ? nativeOne : shell;
            runner(dir, before, new RecordingListener());
            RunningJob running = started(runner.start(sh("long", "while [ ! -e ../../gate ]; do sleep 0.05; done; exit 7")));
            RunningJob ending = started(runner.start(sh("short", "while [ ! -e ../../gate2 ]; do sleep 0.05; done; exit 5")));
            runner.close(); // the agent goes away; its jobs do not
            Files.createFile(dir.resolve("gate2"));
            assertThat(eventually(Duration.ofSeconds(5), () -> !ending.handle().isAlive())).isTrue();

            RecordingListener events = new RecordingListener();
            List<RunningJob> adopted = runner(dir, after, events).recover();
            assertThat(adopted).as(before.description() + " -> " + after.description()).extracting(RunningJob::key).containsExactly(new JobKey("long", 0));
            assertThat(adopted.getFirst().pid()).isEqualTo(running.pid());
            assertThat(events.endOf(new JobKey("short", 0)).exitCode()).as("recorded by " + before.description()).isEqualTo(5);
            Files.createFile(dir.resolve("gate"));
            JobEnd end = await(adopted.getFirst());
            assertThat(end.exitCode()).isEqualTo(7);
            assertThat(end.phase()).isEqualTo(JobPhase.FAILED);
            runner.close();
        }
    }

    @Test
    void the_native_wrapper_is_installed_once_per_content_and_anything_else_there_is_replaced() throws Exception {
        NativeWrapper first = nativeWrapper(work);
        Path program = first.program();
        assertThat(program.getParent()).isEqualTo(work.resolve("bin"));
        assertThat(Files.getPosixFilePermissions(program.getParent())).isEqualTo(PosixFilePermissions.fromString("rwx------"));
        assertThat(Files.getPosixFilePermissions(program)).isEqualTo(PosixFilePermissions.fromString("rwx------"));
        byte[] content = Files.readAllBytes(program);
        // an earlier version left behind, and this version's file changed on disk
        Path older = Files.writeString(program.getParent().resolve(NativeWrapper.NAME + "-0123456789abcdef"), "old");
        Files.write(program, "tampered".getBytes(StandardCharsets.UTF_8));
        NativeWrapper again = NativeWrapper.install(work).wrapper();
        assertThat(again.program()).isEqualTo(program);
        assertThat(Files.readAllBytes(program)).as("its content again").isEqualTo(content);
        assertThat(older).doesNotExist();
        try (Stream<Path> files = Files.list(program.getParent())) {
            assertThat(files.toList()).containsExactly(program);
        }
    }

    @Test
    void a_program_that_does_not_run_on_this_machine_is_never_given_a_job() throws Exception {
        nativeWrapper(work); // built: this is about a copy that cannot run here (a bundle moved to another C library)
        byte[] broken = "#!/bin/sh\necho 'error while loading shared libraries: libc.so.6: version GLIBC_2.99 not found' >&2; exit 127\n"
                .getBytes(StandardCharsets.UTF_8);
        Path other = Files.createDirectories(work.resolve("other"));
        NativeWrapper.Installed n = NativeWrapper.install(other, broken);
        assertThat(n.wrapper()).isNull();
        assertThat(n.whyNot()).contains("cannot run on this machine", "exit 127", "GLIBC_2.99");
    }

    @Test
    void a_place_other_accounts_may_write_to_gets_no_native_wrapper_and_jobs_run_in_the_shell_one() throws Exception {
        nativeWrapper(work); // built: the refusals below are about the place, not a missing program
        // a work directory of the agent's own, in a directory any account may rename it in
        Path shared = Files.createDirectories(work.resolve("shared"));
        Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxrwxrwx"));
        Path open = Files.createDirectories(shared.resolve("agent"));
        NativeWrapper.Installed n = NativeWrapper.install(open);
        assertThat(n.wrapper()).isNull();
        assertThat(n.whyNot()).contains(shared.toString(), "may be written by other accounts");
        assertThat(open.resolve("bin")).as("nothing made there").doesNotExist();
        // sticky, as /tmp is: no other account may rename what is the agent's
        Files.setAttribute(shared, "unix:mode", 01777);
        assertThat(NativeWrapper.install(open).whyNot()).isNull();
        Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxrwxrwx"));
        JobWrapper chosen = JobWrapper.forThisMachine(open, RunnerConfig.WrapperChoice.AUTO);
        assertThat(chosen).isInstanceOf(ShellWrapper.class);
        assertThat(chosen.description()).contains("may be written by other accounts");
        // an agent told to use the native wrapper does not start without it, and says why
        assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> JobWrapper.forThisMachine(open, RunnerConfig.WrapperChoice.NATIVE)))
                .isInstanceOf(io.gpupool.model.SpecException.class).hasMessageContaining("native job wrapper").hasMessageContaining("may be written by other accounts");
        assertThat(JobWrapper.forThisMachine(work, RunnerConfig.WrapperChoice.NATIVE)).isInstanceOf(NativeWrapper.class);
        assertThat(JobWrapper.forThisMachine(work, RunnerConfig.WrapperChoice.SHELL)).isInstanceOf(ShellWrapper.class);

        Path groupBin = Files.createDirectories(work.resolve("group"));
        Files.createDirectory(groupBin.resolve("bin"), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxrwx---")));
        Files.setPosixFilePermissions(groupBin.resolve("bin"), PosixFilePermissions.fromString("rwxrwx---"));
        assertThat(NativeWrapper.install(groupBin).whyNot()).contains(groupBin.resolve("bin").toString(), "may be written by other accounts");

        RecordingListener events = new RecordingListener();
        runner(open, chosen, events);
        assertThat(runner.spawnMethod()).contains("the shell wrapper");
        assertThat(await(started(runner.start(sh("plain", "exit 3")))).exitCode()).isEqualTo(3);
    }

    @Test
    void an_environment_larger_than_a_pipe_holds_reaches_the_job_whole() throws Exception {
        // a pipe holds 64 KiB: the agent writes the rest while the wrapper reads (one string may be up to 128 KiB)
        String big = "x".repeat(100_000);
        Map<String, String> env = new java.util.LinkedHashMap<>();
        for (int i = 0; i < 3; i++) env.put("JOB_BIG_" + i, big + i);
        // as the agent's account, and (as root) as nobody: the shell wrapper then reads it on stdin too
        Files.setPosixFilePermissions(work, PosixFilePermissions.fromString("rwx--x--x"));
        List<String> accounts = UnixAccount.effectiveUid() == 0 ? java.util.Arrays.asList(null, "nobody") : java.util.Collections.singletonList(null);
        for (String account : accounts) {
            for (JobWrapper w : Jobs.wrappers(work)) {
                runner = new JobRunner(RunnerConfig.defaults(work).withAccounts(account, false), List.of(), new RecordingListener(),
                        Confinement.off("not in this test", DeviceNodes.system()), JobSpawner.forThisMachine(), w);
                RunningJob job = started(runner.start(new io.gpupool.agent.protocol.JobLaunch("big-" + (w instanceof NativeWrapper) + "-" + account, 0,
                        List.of("sh", "-c", "printf '%s' \"$JOB_BIG_0$JOB_BIG_1$JOB_BIG_2\" | wc -c"), env, null, List.of())));
                String which = w.description() + ", as " + account;
                assertThat(await(job).exitCode()).as(which).isZero();
                assertThat(Files.readString(job.directory().stdout()).strip()).as(which).isEqualTo(Integer.toString(3 * 100_001));
                runner.close();
            }
        }
    }

    @Test
    void an_environment_cut_short_runs_nothing() throws Exception {
        Path jobDir = Files.createDirectories(work.resolve("job"));
        Path marker = work.resolve("ran");
        List<String> command = List.of("/bin/sh", "-c", "touch " + marker);
        // the native wrapper: its stream ends without the empty entry
        List<String> argv = new ArrayList<>(List.of(nativeWrapper(work).program().toString(), jobDir.toString(), "--"));
        argv.addAll(command);
        Result r = run(argv, "PATH=/usr/bin:/bin\0A=1\0".getBytes(StandardCharsets.UTF_8));
        assertThat(r.exit()).isEqualTo(125);
        assertThat(r.stderr()).contains("the job's environment was cut short");
        assertThat(jobDir.resolve(JobDirectory.PID)).as("it stopped before its first step").doesNotExist();
        assertThat(marker).doesNotExist();
        // the shell wrapper's account side: its stream ends without the end line
        List<String> shellSide = new ArrayList<>(List.of("/bin/sh", "-c", ShellWrapper.ACCOUNT_SIDE, "gpupool-enter", "END", jobDir.toString()));
        shellSide.addAll(command);
        Result s = run(shellSide, "export PATH='/usr/bin:/bin'\nexport A='1'\n".getBytes(StandardCharsets.UTF_8));
        assertThat(s.exit()).isEqualTo(125);
        assertThat(s.stderr()).contains("the job's environment was cut short");
        assertThat(marker).doesNotExist();
        // whole, both run the command
        assertThat(run(argv, NativeWrapper.environment(Map.of("PATH", "/usr/bin:/bin"))).exit()).isZero();
        assertThat(run(shellSide, ShellWrapper.exports(Map.of("PATH", "/usr/bin:/bin"), "END")).exit()).isZero();
        assertThat(marker).exists();
    }

    @Test
    void no_command_line_carries_a_value_of_the_job_environment() throws Exception {
        JobDirectory dir = new JobDirectory(Files.createDirectories(work.resolve("jobs/j.0")));
        UnixAccount alice = new UnixAccount("alice", 1234, 1235, "/home/alice");
        Map<String, String> env = Map.of("LD_PRELOAD", "/tmp/x.so", "TOKEN", "hunter2");
        List<JobWrapper> wrappers = new ArrayList<>(List.of(new ShellWrapper("/usr/bin/setpriv", "test")));
        Jobs.nativeWrapper(work).ifPresent(wrappers::add);
        for (JobWrapper w : wrappers) {
            JobWrapper.Call call = w.asAccount(dir, List.of("python", "train.py"), env, dir.work(), false, alice, List.of(1235, 27));
            assertThat(String.join(" ", call.argv())).as(w.description()).doesNotContain("hunter2", "x.so").contains(dir.path().toString());
            assertThat(call.env()).as("what runs as root gets nothing the job chose").doesNotContainKeys("LD_PRELOAD", "TOKEN");
            assertThat(new String(call.stdin(), StandardCharsets.UTF_8)).contains("hunter2", "/tmp/x.so");
            assertThat(call.argv()).endsWith("python", "train.py");
        }
        // the shell wrapper takes only names a shell can export
        assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> ShellWrapper.exports(Map.of("A-B", "1"), "END")))
                .hasMessageContaining("'A-B'");
    }

    private record Result(int exit, String stderr) {}

    private static Result run(List<String> argv, byte[] stdin) throws Exception {
        Process p = new ProcessBuilder(argv).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        try (var in = p.getOutputStream()) {
            in.write(stdin);
        }
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(10, TimeUnit.SECONDS)).as(Arrays.toString(argv.toArray())).isTrue();
        return new Result(p.exitValue(), err);
    }
}
