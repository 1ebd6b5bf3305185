package io.gpupool.agent.run;

import io.gpupool.agent.AgentJson;
import io.gpupool.agent.protocol.JobPhase;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Map;

/**
 * The notice a job gets before the agent stops it (preemption, cancellation, its time limit): written to
 * {@code notice.json} in the job directory before the SIGTERM, so a training loop that watches the file (or traps
 * SIGTERM and reads it) knows why and how long it has to checkpoint. A job learns where the file is and how long the
 * grace is from its environment ({@link #environment}), known from its start.
 *
 * @param reason       why the job is stopped, in words ("timeout: time limit 00:10:00 reached")
 * @param phase        how the attempt will end: TIMEOUT at the time limit, STOPPED when the server no longer wants it
 *                     (preemption, cancellation, drain), FAILED when the agent stops it for breaking its grant
 * @param deadlineMs   when the agent sends SIGKILL if the job still runs (epoch ms)
 * @param graceSeconds seconds between the SIGTERM and that deadline
 */
public record StopNotice(String reason, JobPhase phase, long deadlineMs, long graceSeconds) {
    /** The file's name in the job directory. */
    public static final String FILE = "notice.json";
    /** The variables a job gets: the notice file's path and the grace in whole seconds (rounded down). */
    public static final String NOTICE_FILE_VAR = "GPUPOOL_NOTICE_FILE", GRACE_VAR = "GPUPOOL_PREEMPT_GRACE";

    static Map<String, String> environment(JobDirectory dir, Duration grace) {
        return Map.of(NOTICE_FILE_VAR, dir.path().resolve(FILE).toString(), GRACE_VAR, Long.toString(grace.toSeconds()));
    }

    /** Writes the notice whole (never half a file), readable by the job's own account. */
    static void write(JobDirectory dir, StopNotice notice) throws IOException {
        Path file = dir.path().resolve(FILE);
        AgentJson.writeAtomically(file, notice);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
    }
}
