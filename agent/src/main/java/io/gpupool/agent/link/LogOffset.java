package io.gpupool.agent.link;

import io.gpupool.agent.run.LogStream;

/** The server holds an attempt's stream up to (not including) byte {@code offset}. */
public record LogOffset(String jobId, int attempt, LogStream stream, long offset) {
}
