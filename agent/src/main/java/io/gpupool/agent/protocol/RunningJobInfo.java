package io.gpupool.agent.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * An attempt whose process runs on the node, in a report or a registration.
 *
 * @param submittedMs the submit instant of its job ({@link JobKey}); null when not known (started by an agent of
 *                    protocol version 2)
 */
public record RunningJobInfo(String jobId, int attempt, long pid, long startedAtMs, boolean stopping,
                             @JsonInclude(JsonInclude.Include.NON_NULL) Long submittedMs) {

    public RunningJobInfo(String jobId, int attempt, long pid, long startedAtMs, boolean stopping) {
        this(jobId, attempt, pid, startedAtMs, stopping, null);
    }
}
