package io.gpupool.agent.protocol;

/**
 * One attempt of one job: what the agent starts at most once. The server raises the attempt when it runs a
 * job again (after a preemption, a lost node, a retry), so a repeated or late message about an attempt
 * that already ran never starts it a second time.
 *
 * <p>{@code submittedMs}, the job's submit instant on the server, tells two jobs of one id apart: a server whose store
 * was restored from a backup numbers new jobs on from the backup's last id and so gives out again the ids of jobs
 * submitted after the backup, but never with their submit instants (those lie before the restore). Null: not known (the
 * attempt directories of an agent from before the instant was sent, the launches of a server from before it); such a key
 * stands for any job of its id and attempt ({@link #matches}), as those releases treated it.
 */
public record JobKey(String jobId, int attempt, Long submittedMs) implements Comparable<JobKey> {
    public JobKey {
        if (jobId == null || jobId.isBlank()) throw new io.gpupool.model.SpecException("job", "job_id", "must not be empty");
        if (attempt < 0) throw new io.gpupool.model.SpecException("job " + jobId, "attempt", "must be >= 0, got " + attempt);
        if (submittedMs != null && submittedMs < 0) {
            throw new io.gpupool.model.SpecException("job " + jobId, "submitted_ms", "must be >= 0, got " + submittedMs);
        }
    }

    /** An attempt of a job whose submit instant is not known (an older agent's record, a test). */
    public JobKey(String jobId, int attempt) {
        this(jobId, attempt, null);
    }

    /** The same job id and attempt number, whatever the jobs behind them. */
    public boolean sameAttempt(JobKey o) {
        return jobId.equals(o.jobId) && attempt == o.attempt;
    }

    /**
     * Whether the two may be the same attempt of the same job: same id and attempt, and the same submit instant where
     * both know one.
     */
    public boolean matches(JobKey o) {
        return sameAttempt(o) && (submittedMs == null || o.submittedMs == null || submittedMs.equals(o.submittedMs));
    }

    @Override
    public int compareTo(JobKey o) {
        int c = jobId.compareTo(o.jobId);
        if (c != 0) return c;
        c = Integer.compare(attempt, o.attempt);
        if (c != 0) return c;
        return Long.compare(submittedMs == null ? -1 : submittedMs, o.submittedMs == null ? -1 : o.submittedMs);
    }

    @Override
    public String toString() {
        return jobId + "#" + attempt;
    }
}
