package io.gpupool.store;

/** One GPU (or share of one) held by a running job; nodes are named, so ids may change across restarts. */
public record GrantRow(int replica, String node, int gpu, int milli, long memoryMib, boolean exclusive) {
}
