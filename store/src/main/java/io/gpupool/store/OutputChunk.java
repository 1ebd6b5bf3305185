package io.gpupool.store;

/**
 * Bytes of one output stream of one attempt on one node, from {@code offset}; the chunks of a stream are
 * contiguous from 0.
 *
 * @param stream   stdout or stderr
 * @param complete the attempt has ended and its stream ends with this chunk
 */
public record OutputChunk(String jobId, int attempt, String node, String stream, long offset, byte[] data, boolean complete, long atMs) {
}
