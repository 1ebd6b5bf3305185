package io.gpupool.agent.protocol;

/**
 * New output of one attempt's stream, from byte {@code offset}. The server appends it when {@code offset}
 * equals the length it holds, ignores it when it already has those bytes, and acknowledges the length it
 * holds; so a chunk resent after a lost answer is harmless.
 *
 * @param data     the bytes (base64 in JSON)
 * @param complete the attempt has ended and this chunk reaches the end of its stream
 */
public record LogChunk(String jobId, int attempt, LogStream stream, long offset, byte[] data, boolean complete) {
}
