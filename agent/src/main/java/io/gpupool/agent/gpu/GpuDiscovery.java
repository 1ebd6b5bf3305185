package io.gpupool.agent.gpu;

import java.util.List;

/**
 * What a backend found on this machine: the driver and the GPUs, in index order.
 *
 * @param backend       the backend that found them ({@code nvml}, {@code nvidia-smi}, {@code fake})
 * @param driverVersion the kernel driver's version, e.g. {@code 550.54.15}; null where unknown
 * @param cudaVersion   the highest CUDA version the driver supports, e.g. {@code 12.4}; null where unknown
 * @param gpus          the GPUs, index 0..n-1
 */
public record GpuDiscovery(String backend, String driverVersion, String cudaVersion, List<GpuInfo> gpus) {
    public GpuDiscovery {
        gpus = List.copyOf(gpus);
    }
}
