package io.gpupool.predict.sizing;

import io.gpupool.model.GpuModel;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Time per step on a GPU model, from FLOPs and the data sheet's peak:
 * <ul>
 *   <li>training step of one replica: (6 P + 6 L S h) FLOPs per token x B S tokens (Kaplan et al. 2020,
 *       table 1: forward 2 P + 2 L S h, backward twice that); full recomputation adds one forward (8 instead
 *       of 6). Time = FLOPs / (tp x peak x MFU); data-parallel replicas run side by side.</li>
 *   <li>inference: prefill of B sequences of S tokens, (2 P + 2 L S h) x B S FLOPs, compute-bound as above;
 *       decoding one token for each sequence reads every weight and the KV cache once, so it takes
 *       max(bytes per GPU / (bandwidth x {@value #BANDWIDTH_EFFICIENCY}), 2 P B / (tp x peak x MFU)).</li>
 * </ul>
 * Peak: the dense bf16 (fp16 for fp16, int8, int4: weight-only quantization computes in 16 bits) tensor
 * TFLOP/s of the catalog; a card without bf16 runs bf16 work at its fp16 rate; fp32 uses TF32 at half the
 * bf16 rate (A100/H100 data sheets), or 1/8 of the fp16 tensor rate on cards without TF32 (V100, T4, P100).
 * Communication is not modelled.
 */
public final class StepTimeModel {
    /** Share of peak memory bandwidth that decoding achieves (assumed; serving engines reach 70-85%). */
    public static final double BANDWIDTH_EFFICIENCY = 0.75;

    /** A time estimate and how it was reached. */
    public record StepTime(double stepSeconds, double decodeSecondsPerToken, double stepFlops, List<String> explanation) {}

    record Peak(double tflops, String how) {}

    static Peak peak(GpuModel g, Precision p) {
        return switch (p) {
            case BF16 -> g.bf16Tflops() > 0 ? new Peak(g.bf16Tflops(), "bf16 peak " + g.bf16Tflops() + " TFLOP/s")
                    : new Peak(g.fp16Tflops(), "no bf16 on " + g.id() + ": fp16 peak " + g.fp16Tflops() + " TFLOP/s");
            case FP16, INT8, INT4 -> new Peak(g.fp16Tflops(), "fp16 peak " + g.fp16Tflops() + " TFLOP/s");
            case FP32 -> g.bf16Tflops() > 0 ? new Peak(g.bf16Tflops() / 2, "TF32 = bf16 peak / 2 = " + fmt(g.bf16Tflops() / 2) + " TFLOP/s")
                    : new Peak(g.fp16Tflops() / 8, "no TF32 on " + g.id() + ": fp16 tensor peak / 8 = " + fmt(g.fp16Tflops() / 8) + " TFLOP/s");
        };
    }

    public StepTime estimate(SizingRequest r, Layout layout, MemoryEstimate memory, GpuModel gpu) {
        ModelShape m = r.shape();
        double p = r.params();
        double tokens = (double) r.batch() * r.seq();
        double attention = (double) m.layers() * r.seq() * m.hidden();
        Peak peak = peak(gpu, r.precision());
        double flopsPerSecond = layout.tp() * peak.tflops() * 1e12 * r.mfu();
        List<String> why = new ArrayList<>();
        String rate = "tp " + layout.tp() + " x " + peak.how() + " x MFU " + r.mfu();
        if (r.mode() == Mode.TRAIN) {
            int factor = r.recompute() == Recompute.FULL ? 8 : 6;
            double flops = factor * (p + attention) * tokens;
            double seconds = flops / flopsPerSecond;
            why.add(String.format(Locale.ROOT, "step FLOPs = %d x (P + L S h) x B S = %d x (%s + %s) x %s = %.3e%s",
                    factor, factor, Units.num(p), Units.num(attention), Units.num(tokens), flops,
                    factor == 8 ? " (full recomputation: one more forward)" : ""));
            why.add("step time = step FLOPs / (" + rate + ") = " + Units.seconds(seconds));
            return new StepTime(seconds, Double.NaN, flops, why);
        }
        double flops = 2 * (p + attention) * tokens;
        double prefill = flops / flopsPerSecond;
        why.add(String.format(Locale.ROOT, "prefill FLOPs = 2 x (P + L S h) x B S = 2 x (%s + %s) x %s = %.3e",
                Units.num(p), Units.num(attention), Units.num(tokens), flops));
        why.add("step (prefill) time = prefill FLOPs / (" + rate + ") = " + Units.seconds(prefill));
        double bytes = memory.perGpu().get(0).bytes() + memory.perGpu().get(4).bytes();
        double memorySeconds = bytes / (gpu.memoryBandwidthGBs() * 1e9 * BANDWIDTH_EFFICIENCY);
        double computeSeconds = 2 * p * r.batch() / flopsPerSecond;
        double decode = Math.max(memorySeconds, computeSeconds);
        why.add(String.format(Locale.ROOT, "decode step = max(read weights + KV %s / (%.0f GB/s x %.2f), 2 P B / rate) = max(%s, %s) = %s per token",
                Units.gib(bytes), gpu.memoryBandwidthGBs(), BANDWIDTH_EFFICIENCY, Units.seconds(memorySeconds),
                Units.seconds(computeSeconds), Units.seconds(decode)));
        return new StepTime(prefill, decode, flops, why);
    }

    private static String fmt(double v) {
        return String.format(Locale.ROOT, "%.1f", v);
    }
}
