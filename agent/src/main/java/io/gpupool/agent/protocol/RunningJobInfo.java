package io.gpupool.agent.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * An attempt whose process runs on the node, in a report or a registration.
 *
 * @param submittedMs the submit instant of its job ({@link JobKey}); null when not known (its launch did not name it, or an
 *                    agent of an earlier release started it)
 */
public record RunningJobInfo(String jobId, int attempt, long pid, long startedAtMs, boolean stopping,
                             @JsonInclude(JsonInclude.Include.NON_NULL) Long submittedMs) {

    public RunningJobInfo(String jobId, int attempt, long pid, long startedAtMs, boolean stopping) {
        this(jobId, attempt, pid, startedAtMs, stopping, null);
    }
}
