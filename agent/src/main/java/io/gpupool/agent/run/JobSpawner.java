package io.gpupool.agent.run;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * How the agent starts a job's wrapper ({@link JobWrapper}) as the leader of a session of its own, with the job's
 * output going straight into its directory's log files: through {@link PosixSpawn} where the C library allows (one
 * clone and one exec), else through the JDK's ProcessBuilder under {@code setsid} (its {@code jspawnhelper} and the
 * setsid program cost two execs more per job).
 */
sealed interface JobSpawner {

    /**
     * A started wrapper. {@code exitValue} completes once the process has ended and was reaped: its exit code, or 128 +
     * the signal that killed it (null if that could not be learned). {@code ownSession}: it leads its own session and
     * process group, so stopping the group reaches everything it forked.
     */
    record Spawned(ProcessHandle handle, Optional<Instant> startInstant, CompletableFuture<Integer> exitValue, boolean ownSession) {}

    /** Runs {@code command} in the wrapper for {@code dir}, in {@code workDir}, with exactly {@code env}. */
    Spawned spawn(JobDirectory dir, List<String> command, Map<String, String> env, Path workDir) throws IOException;

    /** What it uses, for the agent's start message. */
    String description();

    /** posix_spawn where this machine's C library has what it needs, else ProcessBuilder (and why). */
    static JobSpawner forThisMachine() {
        String why = PosixSpawn.unavailableReason();
        return why == null ? new Posix() : new Jdk("posix_spawn is unavailable: " + why, JobWrapper.findSetsid());
    }

    /** {@link PosixSpawn} with POSIX_SPAWN_SETSID, reaped by {@link ChildReaper}. */
    record Posix() implements JobSpawner {
        @Override
        public Spawned spawn(JobDirectory dir, List<String> command, Map<String, String> env, Path workDir) throws IOException {
            long pid = PosixSpawn.spawn(JobWrapper.commandLine(null, dir, command), env, workDir, dir.stdout(), dir.stderr());
            // looked up before the reaper starts: until it reaps, the child exists (at least as a zombie)
            Optional<ProcessHandle> handle = ProcessHandle.of(pid);
            CompletableFuture<Integer> exit = ChildReaper.exitOf(pid);
            if (handle.isEmpty()) throw new IllegalStateException("the spawned process " + pid + " vanished before it was reaped");
            return new Spawned(handle.get(), handle.get().info().startInstant(), exit, true);
        }

        @Override
        public String description() {
            return "posix_spawn with POSIX_SPAWN_SETSID (through FFM)";
        }
    }

    /** The JDK's ProcessBuilder, under {@code setsid} where there is one (null: the job has no session of its own). */
    record Jdk(String why, String setsid) implements JobSpawner {
        @Override
        public Spawned spawn(JobDirectory dir, List<String> command, Map<String, String> env, Path workDir) throws IOException {
            ProcessBuilder pb = new ProcessBuilder(JobWrapper.commandLine(setsid, dir, command))
                    .directory(workDir.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.stdout().toFile()))
                    .redirectError(ProcessBuilder.Redirect.appendTo(dir.stderr().toFile()));
            pb.environment().clear();
            pb.environment().putAll(env);
            Process p = pb.start();
            return new Spawned(p.toHandle(), p.info().startInstant(), p.onExit().thenApply(Process::exitValue), setsid != null);
        }

        @Override
        public String description() {
            return "the JDK's ProcessBuilder" + (setsid == null ? " without setsid (none found)" : " under setsid") + " (" + why + ")";
        }
    }
}
