package io.gpupool.model;

import java.util.List;

/**
 * One GPU product as the vendor's data sheet describes it. Throughput figures are dense
 * (no structured sparsity). A model without NVLink has {@code nvlinkGeneration == 0}.
 *
 * @param id                 canonical ID as printed by {@code gpupool catalog}, e.g. {@code A100-80GB}
 * @param productName        vendor's product name, e.g. {@code NVIDIA A100 80GB SXM4}
 * @param memoryMib          device memory in MiB
 * @param bf16Tflops         dense BF16 tensor TFLOP/s (0 where the card has no BF16 support)
 * @param fp16Tflops         dense FP16 tensor TFLOP/s
 * @param memoryBandwidthGBs memory bandwidth in GB/s
 * @param tdpWatts           board power (TDP / max power) in watts
 * @param idleWatts          power of the GPU when powered on and running nothing, in watts (an assumption, not a
 *                           data-sheet figure: docs/gpu-catalog.md; 0 where unknown)
 * @param nvlinkGeneration   NVLink generation (0 = none)
 * @param nvlinkBandwidthGBs total NVLink bandwidth per GPU in GB/s (0 = none)
 * @param aliases            other names that resolve to this model (trace codes, product strings)
 * @param source             where the figures come from
 */
public record GpuModel(
        String id,
        String productName,
        int memoryMib,
        double bf16Tflops,
        double fp16Tflops,
        double memoryBandwidthGBs,
        int tdpWatts,
        int idleWatts,
        int nvlinkGeneration,
        double nvlinkBandwidthGBs,
        List<String> aliases,
        String source) {

    public GpuModel {
        if (id == null || id.isBlank()) throw new SpecException("gpu model", "id", "must not be empty");
        if (memoryMib <= 0) throw new SpecException("gpu model " + id, "memoryMib", "must be > 0");
        if (idleWatts < 0 || tdpWatts > 0 && idleWatts > tdpWatts) {
            throw new SpecException("gpu model " + id, "idleWatts", "must be in 0..tdpWatts (" + tdpWatts + "), got " + idleWatts);
        }
        aliases = List.copyOf(aliases);
    }

    /** A model without an idle power figure (0: unknown), as models described outside the catalog are. */
    public GpuModel(String id, String productName, int memoryMib, double bf16Tflops, double fp16Tflops, double memoryBandwidthGBs,
                    int tdpWatts, int nvlinkGeneration, double nvlinkBandwidthGBs, List<String> aliases, String source) {
        this(id, productName, memoryMib, bf16Tflops, fp16Tflops, memoryBandwidthGBs, tdpWatts, 0, nvlinkGeneration, nvlinkBandwidthGBs,
                aliases, source);
    }

    public boolean hasNvlink() {
        return nvlinkGeneration > 0;
    }

    @Override
    public String toString() {
        return id;
    }
}
