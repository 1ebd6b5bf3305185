package io.gpupool.model;

/** One physical GPU of a node. {@code index} is the node-local index that CUDA and NVML use. */
public record GpuDevice(int index, String uuid, GpuModel model, boolean healthy) {
    public GpuDevice {
        if (index < 0) throw new SpecException("gpu", "index", "must be >= 0, got " + index);
        if (model == null) throw new SpecException("gpu " + index, "model", "must be set");
        if (uuid == null || uuid.isBlank()) throw new SpecException("gpu " + index, "uuid", "must not be empty");
    }
}
