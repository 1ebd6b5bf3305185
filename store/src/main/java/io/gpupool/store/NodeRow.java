package io.gpupool.store;

/**
 * A GPU server known to the service. {@code spec} is the node as registered (JSON).
 *
 * @param source static (declared with --cluster or by the demo) or agent (registered with a join token)
 */
public record NodeRow(String name, String spec, String source, boolean cordoned, long registeredMs) {
}
