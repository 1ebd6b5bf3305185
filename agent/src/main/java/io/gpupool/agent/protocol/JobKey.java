package io.gpupool.agent.protocol;

/**
 * One attempt of one job: what the agent starts at most once. The server raises the attempt when it runs a
 * job again (after a preemption, a lost node, a retry), so a repeated or late message about an attempt
 * that already ran never starts it a second time.
 */
public record JobKey(String jobId, int attempt) implements Comparable<JobKey> {
    public JobKey {
        if (jobId == null || jobId.isBlank()) throw new io.gpupool.model.SpecException("job", "job_id", "must not be empty");
        if (attempt < 0) throw new io.gpupool.model.SpecException("job " + jobId, "attempt", "must be >= 0, got " + attempt);
    }

    @Override
    public int compareTo(JobKey o) {
        int c = jobId.compareTo(o.jobId);
        return c != 0 ? c : Integer.compare(attempt, o.attempt);
    }

    @Override
    public String toString() {
        return jobId + "#" + attempt;
    }
}
