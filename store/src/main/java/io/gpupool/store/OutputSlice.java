package io.gpupool.store;

/**
 * Part of a stored output stream.
 *
 * @param offset     where {@code data} starts
 * @param data       the bytes (up to what was asked)
 * @param length     how many bytes of the stream the store holds
 * @param complete   the agent said the stream is complete (the attempt ended and all of it is here)
 */
public record OutputSlice(long offset, byte[] data, long length, boolean complete) {
}
