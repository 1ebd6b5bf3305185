package io.gpupool.store;

/**
 * A change to an existing attempt row (a status report of its agent, or the server closing it). Null fields
 * keep what the row holds. {@code state} must not be null: RUNNING (started, or a warning) replaces only
 * ASSIGNED; STOPPING (the server no longer wants it) and the ends apply only to an attempt that has not
 * ended, except that the agent's own end replaces a LOST the server declared. So a late or repeated report
 * never reopens an attempt that has ended.
 *
 * <p>{@code submittedMs}, where given, is the submit instant of the job the change is about: the row changes only if
 * its job is the one submitted then. A store restored from a backup gives out again the ids of jobs submitted after the
 * backup; an agent's report about an attempt of such an earlier job must not change the attempt of the new one.
 */
public record AttemptUpdate(String jobId, int attempt, String node, String state, Long pid, Long startedMs, Long endedMs,
                            Integer exitCode, String message, Long submittedMs) {

    /** A change to the attempt of whichever job has this id (the server's own changes: it knows its jobs). */
    public AttemptUpdate(String jobId, int attempt, String node, String state, Long pid, Long startedMs, Long endedMs,
                         Integer exitCode, String message) {
        this(jobId, attempt, node, state, pid, startedMs, endedMs, exitCode, message, null);
    }
}
