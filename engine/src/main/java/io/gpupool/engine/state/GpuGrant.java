package io.gpupool.engine.state;

/**
 * A share of one GPU handed to a job: {@code milli} thousandths of its compute and {@code memoryMib} of its
 * memory. A whole-GPU grant is exclusive: it takes all compute and all (oversubscribed) memory.
 */
public record GpuGrant(int node, int gpu, int milli, long memoryMib, boolean exclusive) {
}
