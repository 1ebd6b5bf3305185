package io.gpupool.agent.run;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
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

    /** Starts the wrapper {@code call} describes, its stdout and stderr appended to the job directory's logs. */
    Spawned spawn(JobWrapper.Call call, JobDirectory dir) throws IOException;

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
        public Spawned spawn(JobWrapper.Call call, JobDirectory dir) throws IOException {
            long pid = PosixSpawn.spawn(call.argv(), call.env(), call.dir(), dir.stdout(), dir.stderr(), call.stdin());
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
        public Spawned spawn(JobWrapper.Call call, JobDirectory dir) throws IOException {
            List<String> argv = new ArrayList<>();
            if (setsid != null) argv.add(setsid);
            argv.addAll(call.argv());
            ProcessBuilder pb = new ProcessBuilder(argv)
                    .directory(call.dir().toFile())
                    .redirectInput(call.stdin() == null ? ProcessBuilder.Redirect.from(new File("/dev/null")) : ProcessBuilder.Redirect.PIPE)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.stdout().toFile()))
                    .redirectError(ProcessBuilder.Redirect.appendTo(dir.stderr().toFile()));
            pb.environment().clear();
            pb.environment().putAll(call.env());
            Process p = pb.start();
            if (call.stdin() != null) {
                try (OutputStream in = p.getOutputStream()) {
                    in.write(call.stdin());
                } catch (IOException e) {
                    // the wrapper ended before it read (it records why): the job is started and ends on its own
                }
            }
            return new Spawned(p.toHandle(), p.info().startInstant(), p.onExit().thenApply(Process::exitValue), setsid != null);
        }

        @Override
        public String description() {
            return "the JDK's ProcessBuilder" + (setsid == null ? " without setsid (none found)" : " under setsid") + " (" + why + ")";
        }
    }
}
