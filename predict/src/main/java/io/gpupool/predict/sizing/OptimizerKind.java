package io.gpupool.predict.sizing;

import io.gpupool.model.SpecException;

import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * The optimizer's state per parameter, in bytes, excluding the fp32 master copy that mixed precision adds
 * (see {@link MemoryModel}). Sources: Adam/AdamW keep two fp32 moments (ZeRO paper, Rajbhandari et al.
 * 2020, section 3.1: K = 12 bytes with the master copy); SGD with momentum one fp32 buffer; 8-bit Adam
 * (Dettmers et al. 2022, "8-bit Optimizers via Block-wise Quantization") two 1-byte moments plus one fp32
 * absmax per block of 2048 values per moment.
 */
public enum OptimizerKind {
    ADAMW("adamw", 8, "2 fp32 moments (m, v): 4 + 4"),
    SGD("sgd", 4, "1 fp32 momentum buffer: 4"),
    ADAM8BIT("adam8bit", 2 + 2 * 4.0 / 2048, "2 int8 moments + an fp32 absmax per 2048-value block each: 1 + 1 + 2 x 4/2048");

    private final String label;
    private final double stateBytes;
    private final String why;

    OptimizerKind(String label, double stateBytes, String why) {
        this.label = label;
        this.stateBytes = stateBytes;
        this.why = why;
    }

    public String label() { return label; }

    /** Optimizer state bytes per parameter, without a master copy. */
    public double stateBytes() { return stateBytes; }

    /** How {@link #stateBytes()} is made up, for --explain. */
    public String why() { return why; }

    public static OptimizerKind parse(String s) {
        for (OptimizerKind o : values()) if (o.label.equalsIgnoreCase(s == null ? "" : s.trim())) return o;
        throw new SpecException("--optimizer", "optimizer", "unknown optimizer '" + s + "'; known: "
                + Arrays.stream(values()).map(OptimizerKind::label).collect(Collectors.joining(", ")));
    }

    @Override public String toString() { return label; }
}
