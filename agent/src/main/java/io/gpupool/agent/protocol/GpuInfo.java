package io.gpupool.agent.protocol;

import java.util.List;

/**
 * One GPU as discovery sees it; it does not change while the node runs.
 *
 * @param index          the node-local index NVML, nvidia-smi and CUDA (without CUDA_VISIBLE_DEVICES) use
 * @param uuid           the driver's UUID, e.g. {@code GPU-5f0b6d2e-...}; what CUDA_VISIBLE_DEVICES names
 * @param productName    the driver's product string, e.g. {@code NVIDIA A100-SXM4-80GB}
 * @param modelId        the catalog id of the model the product string names, null for a card the catalog lacks
 * @param memoryTotalMib memory as the driver reports it (a few hundred MiB below the data sheet)
 * @param nvlinkPeers    indices of the GPUs this one reaches over NVLink (directly or through NVSwitch)
 * @param minor          the minor number of its device node /dev/nvidiaN (NVML's nvmlDeviceGetMinorNumber, the
 *                       driver's "Device Minor"); null where the backend does not know it. It usually equals the index
 *                       but need not (the driver numbers by PCI probe order, NVML by PCI bus id)
 */
public record GpuInfo(int index, String uuid, String productName, String modelId, long memoryTotalMib,
                      List<Integer> nvlinkPeers, Integer minor) {
    public GpuInfo {
        nvlinkPeers = List.copyOf(nvlinkPeers);
    }

    public GpuInfo(int index, String uuid, String productName, String modelId, long memoryTotalMib, List<Integer> nvlinkPeers) {
        this(index, uuid, productName, modelId, memoryTotalMib, nvlinkPeers, null);
    }

    /** The same GPU with its device node's minor number. */
    public GpuInfo withMinor(Integer m) {
        return new GpuInfo(index, uuid, productName, modelId, memoryTotalMib, nvlinkPeers, m);
    }

    /**
     * The minor number to filter devices by: the known one, else the index. The fallback is a guess (right on most
     * machines, where the driver and NVML number GPUs alike) that only the nvidia-smi backend without
     * /proc/driver/nvidia needs.
     */
    public int deviceMinor() {
        return minor != null ? minor : index;
    }
}
