package io.gpupool.store;

/**
 * A job as the store keeps it. {@code spec} is the accepted request as JSON (the store does not read it).
 *
 * @param seq         arrival order, unique, assigned by the service
 * @param startedMs   start of the current (or last) run; null when never started
 * @param endedMs     when it reached a final state; null while active
 * @param exitCode    the process's exit code, where an agent reported one
 * @param message     why it failed, was cancelled or rejected (free text), else null
 * @param attempt     the current (or last) attempt: 0 before the first start, bumped at every start
 */
public record JobRow(long seq, String id, String tenant, String idemKey, String spec, String state,
                     long submittedMs, Long startedMs, Long endedMs, int preemptions, Integer exitCode, String message,
                     int attempt) {

    /** A job that has not started yet (attempt 0). */
    public JobRow(long seq, String id, String tenant, String idemKey, String spec, String state,
                  long submittedMs, Long startedMs, Long endedMs, int preemptions, Integer exitCode, String message) {
        this(seq, id, tenant, idemKey, spec, state, submittedMs, startedMs, endedMs, preemptions, exitCode, message, 0);
    }

    /** The same job in a new state (fields the new state does not touch stay). */
    public JobRow withState(String newState, Long started, Long ended, int preempts, Integer exit, String msg) {
        return new JobRow(seq, id, tenant, idemKey, spec, newState, submittedMs, started, ended, preempts, exit, msg, attempt);
    }

    /** The same job with another spec (a hold, an edit, a dependency met). */
    public JobRow withSpec(String newSpec) {
        return new JobRow(seq, id, tenant, idemKey, newSpec, state, submittedMs, startedMs, endedMs, preemptions, exitCode, message, attempt);
    }

    /** The same job on its next attempt. */
    public JobRow nextAttempt() {
        return new JobRow(seq, id, tenant, idemKey, spec, state, submittedMs, startedMs, endedMs, preemptions, exitCode, message, attempt + 1);
    }

    /** The array this job is a task of (its id up to '_': task j12_3 of array j12), or null for a job of its own. */
    public String arrayId() {
        int i = id.indexOf('_');
        return i > 0 ? id.substring(0, i) : null;
    }

    public boolean active() {
        return state.equals("PENDING") || state.equals("RUNNING");
    }
}
