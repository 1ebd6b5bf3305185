package io.gpupool.agent.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * One event of one attempt, numbered by the agent. Reports are sent in {@code seq} order and resent until
 * the server acknowledges a seq at or above theirs, so the server must take each seq at most once (it
 * keeps the highest seq it has applied per node) and tolerate a repeated terminal report for the same
 * attempt (after an agent crash between reporting and recording an end).
 *
 * @param seq         agent-wide, strictly increasing, never reused (it survives restarts)
 * @param phase       RUNNING when it started (or for a warning), else how it ended
 * @param exitCode    the command's exit code where known
 * @param pid         the job's process while it runs
 * @param startedAtMs when it started (epoch ms)
 * @param endedAtMs   when it ended, for terminal phases
 * @param message     the reason or warning in words
 * @param submittedMs the submit instant of the job the attempt belongs to ({@link JobKey}): the server applies the
 *                    report only to the job of that id submitted then; null when the agent does not know it (an attempt
 *                    whose launch did not name it, or one an agent of an earlier release started)
 */
public record JobStatusReport(long seq, String jobId, int attempt, JobPhase phase, Integer exitCode, Long pid,
                              Long startedAtMs, Long endedAtMs, String message,
                              @JsonInclude(JsonInclude.Include.NON_NULL) Long submittedMs) {

    /** A report about an attempt of a job whose submit instant is not known. */
    public JobStatusReport(long seq, String jobId, int attempt, JobPhase phase, Integer exitCode, Long pid,
                           Long startedAtMs, Long endedAtMs, String message) {
        this(seq, jobId, attempt, phase, exitCode, pid, startedAtMs, endedAtMs, message, null);
    }

    /** The same report about the attempt of the job submitted at {@code ms}. */
    public JobStatusReport withSubmittedMs(Long ms) {
        return new JobStatusReport(seq, jobId, attempt, phase, exitCode, pid, startedAtMs, endedAtMs, message, ms);
    }

    public JobKey key() {
        return new JobKey(jobId, attempt, submittedMs);
    }
}
