package io.gpupool.predict.sizing;

import io.gpupool.model.SpecException;

/**
 * What the advisor is asked. {@code tp}, {@code dp} and {@code zero} are null when not given: the advisor
 * then uses 1, 1, 0 for the stated per-GPU need and searches them when it recommends GPUs.
 *
 * @param params       parameter count (P)
 * @param optimizer    null when inferring
 * @param batch        sequences per micro-batch of one data-parallel replica (B)
 * @param seq          tokens per sequence (S): training context, or prompt + generated tokens
 * @param contextBytes CUDA context (and library workspaces) per process, one process per GPU
 * @param mfu          model FLOPs utilization assumed for compute-bound phases (0..1]
 */
public record SizingRequest(
        long params,
        Mode mode,
        Precision precision,
        OptimizerKind optimizer,
        int batch,
        int seq,
        ModelShape shape,
        Recompute recompute,
        Integer tp,
        Integer dp,
        Integer zero,
        long contextBytes,
        double mfu) {

    /** 512 MiB: a typical CUDA context with cuBLAS/cuDNN handles under lazy module loading (an assumption; see docs/sizing.md). */
    public static final long DEFAULT_CONTEXT_BYTES = 512L << 20;
    /** 40% model FLOPs utilization: between Megatron's 42% (full recomputation) and 54% (selective) on 2240 A100s. */
    public static final double DEFAULT_MFU = 0.40;

    public SizingRequest {
        if (params <= 0) throw new SpecException("--params", "params", "must be > 0");
        if (mode == null) throw new SpecException("--mode", "mode", "must be train or infer");
        if (precision == null) throw new SpecException("--precision", "precision", "must be set");
        if (mode == Mode.TRAIN) {
            if (precision.quantized()) {
                throw new SpecException("--precision", "precision", precision.label() + " is an inference format; training needs fp32, bf16 or fp16 weights");
            }
            if (optimizer == null) optimizer = OptimizerKind.ADAMW;
        } else {
            if (optimizer != null) throw new SpecException("--optimizer", "optimizer", "applies to --mode train only");
            if (zero != null && zero != 0) throw new SpecException("--zero", "zero", "ZeRO shards training state; it applies to --mode train only");
        }
        if (batch < 1) throw new SpecException("--batch", "batch", "must be >= 1, got " + batch);
        if (seq < 1) throw new SpecException("--seq", "seq", "must be >= 1, got " + seq);
        if (shape == null) throw new SpecException("--layers", "layers", "model shape missing");
        if (recompute == null) recompute = Recompute.SELECTIVE;
        if (tp != null && (tp < 1 || shape.heads() % tp != 0)) {
            throw new SpecException("--tp", "tp", "must divide the " + shape.heads() + " attention heads, got " + tp);
        }
        if (dp != null && dp < 1) throw new SpecException("--dp", "dp", "must be >= 1, got " + dp);
        if (zero != null && (zero < 0 || zero > 3)) throw new SpecException("--zero", "zero", "must be 0, 1, 2 or 3, got " + zero);
        if (contextBytes < 0) throw new SpecException("--context-mib", "context-mib", "must be >= 0");
        if (!(mfu > 0 && mfu <= 1)) throw new SpecException("--mfu", "mfu", "must be in (0, 1], got " + mfu);
    }

    /** The layout the stated per-GPU need is for: the given values, else tp=1, dp=1, zero=0. */
    public Layout requestedLayout() {
        return new Layout(tp != null ? tp : 1, dp != null ? dp : 1, zero != null ? zero : 0);
    }

    /** Mixed precision: 16-bit weights and gradients with an fp32 master copy in the optimizer. */
    public boolean mixedPrecision() {
        return mode == Mode.TRAIN && precision != Precision.FP32;
    }

    public static Builder builder(long params, Mode mode, Precision precision) {
        return new Builder(params, mode, precision);
    }

    /** Defaults: adamw when training, batch 1, seq 2048, shape from params, selective recomputation. */
    public static final class Builder {
        private final long params;
        private final Mode mode;
        private final Precision precision;
        private OptimizerKind optimizer;
        private int batch = 1;
        private int seq = 2048;
        private ModelShape shape;
        private Recompute recompute = Recompute.SELECTIVE;
        private Integer tp;
        private Integer dp;
        private Integer zero;
        private long contextBytes = DEFAULT_CONTEXT_BYTES;
        private double mfu = DEFAULT_MFU;

        private Builder(long params, Mode mode, Precision precision) {
            this.params = params;
            this.mode = mode;
            this.precision = precision;
        }

        public Builder optimizer(OptimizerKind v) { optimizer = v; return this; }
        public Builder batch(int v) { batch = v; return this; }
        public Builder seq(int v) { seq = v; return this; }
        public Builder shape(ModelShape v) { shape = v; return this; }
        public Builder recompute(Recompute v) { recompute = v; return this; }
        public Builder tp(Integer v) { tp = v; return this; }
        public Builder dp(Integer v) { dp = v; return this; }
        public Builder zero(Integer v) { zero = v; return this; }
        public Builder contextBytes(long v) { contextBytes = v; return this; }
        public Builder mfu(double v) { mfu = v; return this; }

        public SizingRequest build() {
            ModelShape s = shape != null ? shape : ModelShape.resolve(params, null, null, null, null, null);
            return new SizingRequest(params, mode, precision, optimizer, batch, seq, s, recompute, tp, dp, zero, contextBytes, mfu);
        }
    }
}
