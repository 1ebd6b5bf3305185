package io.gpupool.agent.protocol;

/**
 * A process holding a compute context on a GPU.
 *
 * @param gpuUuid       the GPU
 * @param pid           the host process id
 * @param usedMemoryMib GPU memory the process holds as the driver counts it (everything the process has
 *                      reserved, not only what its framework has allocated), or null when the driver does
 *                      not say (containers without the host PID namespace, WDDM)
 */
public record GpuProcess(String gpuUuid, long pid, Long usedMemoryMib) {
}
