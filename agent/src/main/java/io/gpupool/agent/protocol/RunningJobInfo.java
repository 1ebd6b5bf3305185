package io.gpupool.agent.protocol;

/** An attempt whose process runs on the node, in a report or a registration. */
public record RunningJobInfo(String jobId, int attempt, long pid, long startedAtMs, boolean stopping) {
}
