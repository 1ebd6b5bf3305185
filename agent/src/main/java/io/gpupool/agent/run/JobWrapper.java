package io.gpupool.agent.run;

import io.gpupool.model.SpecException;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The program every job runs in, between the agent and the job's command: it records its own pid first and the
 * command's exit code last in the job directory (files {@code pid} and {@code exit}), joins the attempt's cgroups
 * before the command starts, switches to the job's account where there is one, and outlives a stop long enough to
 * record the end. The agent starts it in a session of its own ({@link JobSpawner}); an agent that restarts finds it
 * again by its pid and its command line, which names the job directory ({@link #sameProcess}).
 *
 * <p>Two implementations write the same files, so an agent adopts the jobs of either: {@link NativeWrapper}, a small C
 * program built with the agent (one exec of its own per job, with or without an account switch), and
 * {@link ShellWrapper}, {@code sh} with util-linux's setpriv for the switch (three execs), where the native one
 * was not built or cannot be installed.
 */
sealed interface JobWrapper permits NativeWrapper, ShellWrapper {

    /** The job directory's file naming a cgroup the wrapper could not join (the job did not run). */
    String UNCONFINED = "unconfined";

    /**
     * What the spawner starts: the program and its arguments, its own environment and directory, and what it reads
     * on stdin (null: /dev/null).
     */
    record Call(List<String> argv, Map<String, String> env, Path dir, byte[] stdin) {}

    /** The job's {@code command} with exactly {@code env}, in {@code workDir}, as the agent's own account. */
    Call asAgent(JobDirectory dir, List<String> command, Map<String, String> env, Path workDir);

    /**
     * The job's {@code command} as {@code account} (with the supplementary {@code groups}, numeric), with exactly
     * {@code env}, in {@code enterDir}, which the account enters itself (a directory it may not enter stays closed);
     * nothing the job chose reaches what runs as root. The job's logs become the account's (0600) before the command
     * runs, and with {@code makeWorkDir} a new directory {@link JobDirectory#work()} (0700).
     */
    Call asAccount(JobDirectory dir, List<String> command, Map<String, String> env, Path enterDir, boolean makeWorkDir,
                   UnixAccount account, List<Integer> groups) throws IOException;

    /** Why this wrapper cannot switch accounts on this node; null where it can (as root). */
    String cannotSwitchReason();

    /** What it is, for the agent's start message. */
    String description();

    /**
     * The wrapper {@code choice} names, the native one installed under {@code workDir}; for AUTO the native one where
     * it was built for this machine and installs there, else the shell wrapper (its description says why).
     *
     * @throws SpecException where NATIVE was chosen and cannot be had (the reason)
     */
    static JobWrapper forThisMachine(Path workDir, RunnerConfig.WrapperChoice choice) {
        if (choice == RunnerConfig.WrapperChoice.SHELL) return ShellWrapper.onThisMachine("chosen: --job-wrapper shell");
        NativeWrapper.Installed n = NativeWrapper.install(workDir);
        if (n.wrapper() != null) return n.wrapper();
        if (choice == RunnerConfig.WrapperChoice.NATIVE) throw new SpecException("--job-wrapper native", "job-wrapper", "the native job wrapper " + n.whyNot());
        return ShellWrapper.onThisMachine("the native wrapper " + n.whyNot());
    }

    /** The recorded process, if it is still the same one: alive, started when recorded, running a wrapper for this directory. */
    static Optional<ProcessHandle> sameProcess(JobDirectory.ProcessRecord rec, JobDirectory dir) {
        return ProcessHandle.of(rec.pid()).filter(ProcessHandle::isAlive).filter(h -> {
            ProcessHandle.Info info = h.info();
            Optional<Instant> start = info.startInstant();
            if (rec.startInstantMs() != null && start.isPresent()
                    && Math.abs(start.get().toEpochMilli() - rec.startInstantMs()) > 1000) {
                return false;
            }
            if (rec.startInstantMs() == null && start.isPresent() && start.get().toEpochMilli() < rec.startedAtMs() - 1000) {
                return false;
            }
            return info.arguments().map(a -> Arrays.asList(a).contains(dir.path().toString())).orElse(start.isPresent());
        });
    }

    /** The setsid command on the search path (or in /usr/bin, /bin); null where there is none. */
    static String findSetsid() {
        for (String d : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
            Path p = Path.of(d.isEmpty() ? "." : d, "setsid");
            if (Files.isExecutable(p)) return p.toString();
        }
        for (String p : List.of("/usr/bin/setsid", "/bin/setsid")) if (Files.isExecutable(Path.of(p))) return p;
        return null;
    }
}
