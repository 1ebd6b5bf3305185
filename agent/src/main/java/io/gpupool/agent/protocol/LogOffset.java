package io.gpupool.agent.protocol;

/** The server holds an attempt's stream up to (not including) byte {@code offset}. */
public record LogOffset(String jobId, int attempt, LogStream stream, long offset) {
}
