package io.gpupool.agent.run;

import io.gpupool.agent.confine.AttemptCgroup;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * The shell wrapper every job runs in: its script, the command line that starts it, and how an agent that
 * restarted recognises it again. A job runs as {@code sh -c WRAPPER gpupool-job JOBDIR COMMAND...} in a session of its
 * own ({@link JobSpawner}: posix_spawn with POSIX_SPAWN_SETSID, or {@code setsid} in front where ProcessBuilder starts
 * it); the wrapper writes its pid first and the command's exit code last into the job directory.
 */
final class JobWrapper {
    /**
     * The wrapper's first step where the attempt has cgroups: it writes its own pid into each group's cgroup.procs
     * (from the job directory's record, "HIERARCHY CONTROLLERS DIR" per line) before the command starts, so every
     * process of the job starts inside. It runs as the agent's user (root): the job's own identity, if any, applies to
     * the command only. A group it cannot join stops the job before the command runs (exit 125, the group in
     * {@code unconfined}).
     */
    static final String JOIN_CGROUPS = "if [ -f \"$d/" + AttemptCgroup.RECORD + "\" ]; then while read h c g; do "
            + "echo $$ > \"$g/cgroup.procs\" || { echo \"$g\" > \"$d/unconfined\"; exit 125; }; done < \"$d/" + AttemptCgroup.RECORD + "\"; fi; ";
    static final String UNCONFINED = "unconfined";

    /**
     * The wrapper: $1 is the job directory, the rest the command. "trap : TERM INT HUP" makes the shell wait
     * for the command on a stop (a trapped signal runs only after the foreground command ends) while the
     * command itself gets the default handling, so the exit code still gets written. Only builtins besides
     * the command: a job costs no process of the agent's own beyond setsid and this shell. The exit code is a
     * line; a write cut short (the shell killed mid-write) leaves no newline and is not taken.
     */
    static final String WRAPPER = "d=$1; shift; echo $$ > \"$d/pid\"; " + JOIN_CGROUPS + "trap : TERM INT HUP; \"$@\"; rc=$?; "
            + "echo $rc > \"$d/exit\"; exit $rc";

    private JobWrapper() {}

    /** The command line that runs {@code command} in the wrapper for {@code dir}, under {@code setsid} where there is one. */
    static List<String> commandLine(String setsid, JobDirectory dir, List<String> command) {
        List<String> cmd = new ArrayList<>();
        if (setsid != null) cmd.add(setsid);
        cmd.addAll(List.of("/bin/sh", "-c", WRAPPER, "gpupool-job", dir.path().toString()));
        cmd.addAll(command);
        return cmd;
    }

    /** The recorded process, if it is still the same one: alive, started when recorded, running our wrapper for this directory. */
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
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
            Path p = Path.of(dir.isEmpty() ? "." : dir, "setsid");
            if (Files.isExecutable(p)) return p.toString();
        }
        for (String p : List.of("/usr/bin/setsid", "/bin/setsid")) if (Files.isExecutable(Path.of(p))) return p;
        return null;
    }
}
