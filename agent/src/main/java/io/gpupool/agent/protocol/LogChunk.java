package io.gpupool.agent.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * New output of one attempt's stream, from byte {@code offset}. The server appends it when {@code offset}
 * equals the length it holds, ignores it when it already has those bytes, and acknowledges the length it
 * holds; so a chunk resent after a lost answer is harmless.
 *
 * @param data     the bytes (base64 in JSON)
 * @param complete the attempt has ended and this chunk reaches the end of its stream
 * @param submittedMs the submit instant of the attempt's job ({@link JobKey}): the server keeps the output only for
 *                 the job of that id submitted then; null when not known (an attempt whose launch did not name it: from
 *                 a server, or started by an agent, of a release before the instant was sent)
 */
public record LogChunk(String jobId, int attempt, LogStream stream, long offset, byte[] data, boolean complete,
                       @JsonInclude(JsonInclude.Include.NON_NULL) Long submittedMs) {

    public LogChunk(String jobId, int attempt, LogStream stream, long offset, byte[] data, boolean complete) {
        this(jobId, attempt, stream, offset, data, complete, null);
    }
}
