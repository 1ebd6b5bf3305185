package io.gpupool.agent.gpu;

import io.gpupool.agent.protocol.GpuInfo;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.GpuModel;

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

    /** A GPU a backend found, its model whatever the catalog makes of its product string (null: a card it lacks). */
    public static GpuInfo gpu(int index, String uuid, String productName, long memoryTotalMib, List<Integer> nvlinkPeers) {
        return new GpuInfo(index, uuid, productName,
                GpuCatalog.standard().find(productName).map(GpuModel::id).orElse(null), memoryTotalMib, nvlinkPeers);
    }
}
