package io.gpupool.predict.sizing;

import java.util.Locale;

/**
 * What PyTorch's CUDA caching allocator reserves beyond what tensors allocate (c10/cuda/CUDACachingAllocator.cpp):
 * <ul>
 *   <li><b>Rounding</b>: requests are rounded up to 512 bytes (kMinBlockSize); blocks above 1 MiB (kSmallSize)
 *       come from segments rounded up to 2 MiB (kRoundLarge), so a long-lived large tensor wastes on average
 *       half of that, 1 MiB; a small one on average 256 bytes. Counted per long-lived tensor: one per weight
 *       matrix per copy (weights, fp32 master, each optimizer state). ZeRO/FSDP flat buffers hold fewer, larger
 *       tensors and waste less.</li>
 *   <li><b>Fragmentation</b>: memory that is allocated and freed within every step (activations, gradients)
 *       leaves cached free blocks that later requests of other sizes cannot use. gpupool assumes
 *       {@value #FRAGMENTATION} of the reserved short-lived memory is such waste: GMLake (Guo et al.,
 *       ASPLOS 2024) measured the caching allocator's fragmentation on eight LLMs on A100-80GB and removed
 *       15% of it on average (up to 33%).</li>
 * </ul>
 */
public final class AllocatorModel {
    public static final double FRAGMENTATION = 0.15;
    static final double ROUND_LARGE = 2.0 * Units.MIB;
    static final double SMALL_SIZE = Units.MIB;
    static final double MIN_BLOCK = 512;

    private final double fragmentation;

    public AllocatorModel() {
        this(FRAGMENTATION);
    }

    /** @param fragmentation share of the reserved short-lived memory that is lost to fragmentation, [0, 1) */
    public AllocatorModel(double fragmentation) {
        if (!(fragmentation >= 0 && fragmentation < 1)) throw new IllegalArgumentException("fragmentation must be in [0, 1)");
        this.fragmentation = fragmentation;
    }

    Term rounding(double longLivedBytes, int tensorsPerCopy, int copies) {
        int tensors = tensorsPerCopy * copies;
        if (longLivedBytes <= 0 || tensors == 0) return new Term("rounding", 0, "no long-lived tensors");
        double average = longLivedBytes / tensors;
        double wastePerTensor = average > SMALL_SIZE ? ROUND_LARGE / 2 : MIN_BLOCK / 2;
        return new Term("rounding", tensors * wastePerTensor, tensors + " long-lived tensors (" + tensorsPerCopy + " x " + copies
                + " copies) x " + Units.gib(wastePerTensor) + " (half of the " + (average > SMALL_SIZE ? "2 MiB segment" : "512-byte block")
                + " rounding unit; tensors average " + Units.gib(average) + ")");
    }

    Term fragmentation(double shortLivedBytes) {
        double waste = shortLivedBytes * fragmentation / (1 - fragmentation);
        return new Term("fragmentation", waste, String.format(Locale.ROOT,
                "short-lived (activations + gradients) %s x %.2f / (1 - %.2f) [%.0f%% of what they reserve is fragmented]",
                Units.gib(shortLivedBytes), fragmentation, fragmentation, fragmentation * 100));
    }
}
