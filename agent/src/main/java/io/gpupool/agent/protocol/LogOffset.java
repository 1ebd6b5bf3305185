package io.gpupool.agent.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * The server holds an attempt's stream up to (not including) byte {@code offset}; {@code submittedMs} repeats the
 * chunk's ({@link LogChunk}), so the agent applies the acknowledgement to that job's stream only.
 */
public record LogOffset(String jobId, int attempt, LogStream stream, long offset,
                        @JsonInclude(JsonInclude.Include.NON_NULL) Long submittedMs) {

    public LogOffset(String jobId, int attempt, LogStream stream, long offset) {
        this(jobId, attempt, stream, offset, null);
    }
}
