package io.gpupool.predict.sizing;

import io.gpupool.model.SpecException;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * Number format of the model's weights. Training keeps activations and gradients in the same 16- or 32-bit
 * format; int8/int4 are weight-only quantization for inference (compute runs in 16 bits after dequantizing).
 */
public enum Precision {
    FP32(4, false),
    BF16(2, false),
    FP16(2, false),
    INT8(1, true),
    /** 4-bit weights; the per-group scale overhead is added by the memory model. */
    INT4(0.5, true);

    private final double bytes;
    private final boolean quantized;

    Precision(double bytes, boolean quantized) {
        this.bytes = bytes;
        this.quantized = quantized;
    }

    /** Bytes per weight. */
    public double bytes() { return bytes; }

    public boolean quantized() { return quantized; }

    /** Bytes of one activation, gradient or KV-cache value: 4 in fp32, else 2 (quantized models compute in 16 bits). */
    public int activationBytes() { return this == FP32 ? 4 : 2; }

    public String label() { return name().toLowerCase(Locale.ROOT); }

    public static Precision parse(String s) {
        for (Precision p : values()) if (p.label().equalsIgnoreCase(s == null ? "" : s.trim())) return p;
        throw new SpecException("--precision", "precision", "unknown precision '" + s + "'; known: "
                + Arrays.stream(values()).map(Precision::label).collect(Collectors.joining(", ")));
    }
}
