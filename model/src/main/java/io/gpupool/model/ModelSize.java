package io.gpupool.model;

/**
 * The model a job runs, as far as GPU memory sizing needs it: its parameter count as people write it
 * ({@code 7B}, {@code 350M}, {@code 7000000000}), what the GPUs do with it ({@code train} or {@code infer}) and the
 * precision of its weights ({@code fp32}, {@code bf16}, {@code fp16}, {@code int8}, {@code int4}). Checked by the
 * {@link GpuMemorySizer} that reads it.
 */
public record ModelSize(String params, String mode, String precision) {
    public static final String DEFAULT_MODE = "train";
    public static final String DEFAULT_PRECISION = "bf16";

    public ModelSize {
        if (params == null || params.isBlank()) throw new SpecException(null, "params", "must name the parameter count, e.g. 7B");
        if (mode == null || mode.isBlank()) mode = DEFAULT_MODE;
        if (precision == null || precision.isBlank()) precision = DEFAULT_PRECISION;
    }
}
