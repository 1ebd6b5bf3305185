package io.gpupool.predict.sizing;

import io.gpupool.model.SpecException;

/**
 * Activation recomputation while training (Korthikanti et al. 2022, "Reducing Activation Recomputation in
 * Large Transformer Models"): what the forward pass keeps for the backward pass.
 */
public enum Recompute {
    /** Everything is kept, including the attention score matrices (eager attention). */
    NONE,
    /** The attention core is recomputed (Megatron's selective recomputation; FlashAttention keeps the same). */
    SELECTIVE,
    /** Only each layer's input is kept; a layer's forward runs again in the backward pass (+1 forward of FLOPs). */
    FULL;

    public static Recompute parse(String s) {
        for (Recompute r : values()) if (r.label().equalsIgnoreCase(s == null ? "" : s.trim())) return r;
        throw new SpecException("--recompute", "recompute", "must be none, selective or full, got '" + s + "'");
    }

    public String label() { return name().toLowerCase(java.util.Locale.ROOT); }
}
