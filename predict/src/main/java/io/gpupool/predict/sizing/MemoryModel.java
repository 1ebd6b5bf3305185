package io.gpupool.predict.sizing;

import java.util.ArrayList;
import java.util.List;

import static io.gpupool.predict.sizing.Units.num;

/**
 * Bytes of a transformer job, by component, for one replica and per GPU. The formulas (docs/sizing.md):
 * <ul>
 *   <li>weights: P x bytes per weight; int4 adds an fp16 scale and zero point per group of 128 weights (GPTQ/AWQ).</li>
 *   <li>training, mixed precision (ZeRO paper, section 3.1): 2-byte weights, 2-byte gradients, and in the
 *       optimizer an fp32 master copy (4) plus the optimizer's states; AdamW: 2 + 2 + 12 = 16 bytes per
 *       parameter. fp32 training: 4 + 4 + states, no master copy.</li>
 *   <li>training activations per layer (Korthikanti et al. 2022, eq. 1 and section 5): s b h (34 + 5 a s / h)
 *       keeping everything, 34 s b h with selective recomputation, 2 s b h (layer input only) with full
 *       recomputation plus one layer's 34 s b h while it is recomputed; plus fp32 logits 4 s b V. In bytes
 *       for 16-bit activations, doubled for fp32. Tensor parallelism with sequence parallelism divides all by t.</li>
 *   <li>inference: KV cache 2 x L x K x (h / a) x S x B x 2 bytes; activations are one layer's working set
 *       at prefill, s b (2h + 4h) x 2 bytes (residual stream, layer input, MLP intermediate; fused attention,
 *       no s^2 matrix), plus fp32 logits of the last position, 4 b V.</li>
 *   <li>per GPU: tensor parallelism divides weights, gradients, optimizer states and activations by t and the
 *       KV cache by min(t, K) (K/V heads are replicated beyond K shards); ZeRO stage 1/2/3 divides the
 *       optimizer states / + gradients / + weights by the data-parallel degree.</li>
 * </ul>
 * The caching allocator's share is {@link AllocatorModel}'s.
 */
public final class MemoryModel {
    /** GPTQ/AWQ default: one fp16 scale and one fp16 zero point per 128 weights. */
    static final int INT4_GROUP = 128;
    static final double MIXED_MASTER_BYTES = 4;

    private final AllocatorModel allocator;

    public MemoryModel(AllocatorModel allocator) {
        this.allocator = allocator;
    }

    public MemoryModel() {
        this(new AllocatorModel());
    }

    public MemoryEstimate estimate(SizingRequest r, Layout layout) {
        ModelShape m = r.shape();
        double p = r.params();
        String pText = ParamCount.format(r.params()) + " params";
        Term weights = weights(r, pText);
        Term gradients;
        Term optimizer;
        Term activations;
        Term kv;
        if (r.mode() == Mode.TRAIN) {
            double g = r.precision().bytes();
            gradients = new Term("gradients", p * g, pText + " x " + num(g) + " bytes (" + r.precision().label() + ")");
            double master = r.mixedPrecision() ? MIXED_MASTER_BYTES : 0;
            double perParam = master + r.optimizer().stateBytes();
            optimizer = new Term("optimizer", p * perParam, pText + " x " + num(perParam) + " bytes ("
                    + (master > 0 ? "fp32 master copy 4 + " : "") + r.optimizer().label() + ": " + r.optimizer().why() + ")");
            activations = trainingActivations(r, m);
            kv = new Term("kv_cache", 0, "none while training");
        } else {
            gradients = new Term("gradients", 0, "none when inferring");
            optimizer = new Term("optimizer", 0, "none when inferring");
            activations = inferenceActivations(r, m);
            kv = kvCache(r, m);
        }

        int t = layout.tp();
        int kvShards = Math.min(t, m.kvHeads());
        List<Term> perGpu = new ArrayList<>();
        perGpu.add(divide(weights, t, layout.zeroShards(3), "ZeRO-3"));
        perGpu.add(divide(gradients, t, layout.zeroShards(2), "ZeRO-2"));
        perGpu.add(divide(optimizer, t, layout.zeroShards(1), "ZeRO-1"));
        perGpu.add(divide(activations, t, 1, null));
        perGpu.add(new Term("kv_cache_per_gpu", kv.bytes() / kvShards,
                kvShards == 1 ? "kv_cache (not split)" : "kv_cache / min(tp " + t + ", kv_heads " + m.kvHeads() + ") = / " + kvShards));

        double allocated = perGpu.stream().mapToDouble(Term::bytes).sum();
        Term allocatedTerm = new Term("allocated", allocated, "sum of the per-GPU components");
        double longLived = perGpu.get(0).bytes() + perGpu.get(2).bytes() + perGpu.get(4).bytes();
        double shortLived = perGpu.get(1).bytes() + perGpu.get(3).bytes();
        Term rounding = allocator.rounding(longLived, tensorsPerCopy(m), stateCopies(r));
        Term fragmentation = allocator.fragmentation(shortLived);
        double reserved = allocated + rounding.bytes() + fragmentation.bytes();
        Term reservedTerm = new Term("reserved", reserved, "allocated + rounding + fragmentation");
        Term context = new Term("cuda_context", r.contextBytes(), "one process per GPU x " + Units.gib(r.contextBytes())
                + " (assumed; --context-mib)");
        Term total = new Term("per_gpu", reserved + r.contextBytes(), "reserved + cuda_context");
        return new MemoryEstimate(layout, weights, gradients, optimizer, activations, kv, perGpu,
                allocatedTerm, rounding, fragmentation, reservedTerm, context, total);
    }

    private static Term weights(SizingRequest r, String pText) {
        Precision pr = r.precision();
        double p = r.params();
        if (pr == Precision.INT4) {
            double perParam = pr.bytes() + 2.0 * 2 / INT4_GROUP;
            return new Term("weights", p * perParam, pText + " x (0.5 + 2 x 2 / " + INT4_GROUP
                    + ") bytes (int4 + fp16 scale and zero per group of " + INT4_GROUP + ")");
        }
        return new Term("weights", p * pr.bytes(), pText + " x " + num(pr.bytes()) + " bytes (" + pr.label() + ")");
    }

    private static Term trainingActivations(SizingRequest r, ModelShape m) {
        double s = r.seq();
        double b = r.batch();
        double h = m.hidden();
        double a = m.heads();
        int layers = m.layers();
        double scale = r.precision().activationBytes() / 2.0;
        String dims = "s " + r.seq() + ", b " + r.batch() + ", h " + m.hidden() + ", L " + layers;
        double perLayer;
        String how;
        switch (r.recompute()) {
            case NONE -> {
                perLayer = s * b * h * (34 + 5 * a * s / h);
                how = "L x s b h (34 + 5 a s / h) [no recomputation, a " + m.heads() + "]";
            }
            case SELECTIVE -> {
                perLayer = 34 * s * b * h;
                how = "L x 34 s b h [selective recomputation]";
            }
            default -> {
                perLayer = 2 * s * b * h;
                how = "(L x 2 s b h + 34 s b h) [full recomputation: layer inputs + one layer recomputed]";
            }
        }
        double layersBytes = perLayer * layers + (r.recompute() == Recompute.FULL ? 34 * s * b * h : 0);
        double logits = 4 * s * b * m.vocab();
        return new Term("activations", layersBytes * scale + logits,
                (scale != 1 ? "2 x " : "") + how + " + 4 s b V [fp32 logits, V " + m.vocab() + "] with " + dims);
    }

    private static Term inferenceActivations(SizingRequest r, ModelShape m) {
        double s = r.seq();
        double b = r.batch();
        double h = m.hidden();
        int bytes = r.precision().activationBytes();
        double layer = s * b * (2 * h + 4 * h) * bytes;
        double logits = 4 * b * m.vocab();
        return new Term("activations", layer + logits, "s b (2h + 4h) x " + bytes + " bytes [one layer at prefill] + 4 b V "
                + "[fp32 logits of the last position] with s " + r.seq() + ", b " + r.batch() + ", h " + m.hidden() + ", V " + m.vocab());
    }

    private static Term kvCache(SizingRequest r, ModelShape m) {
        int bytes = r.precision().activationBytes();
        double perToken = 2.0 * m.layers() * m.kvHeads() * m.headDim() * bytes;
        return new Term("kv_cache", perToken * r.seq() * r.batch(),
                "2 (K and V) x L " + m.layers() + " x kv_heads " + m.kvHeads() + " x head_dim " + m.headDim()
                        + " x " + bytes + " bytes = " + Units.gib(perToken) + " per token, x S " + r.seq() + " x B " + r.batch());
    }

    private static Term divide(Term whole, int tp, int zeroShards, String zeroName) {
        double v = whole.bytes() / tp / zeroShards;
        StringBuilder f = new StringBuilder(whole.name());
        if (tp > 1) f.append(" / tp ").append(tp);
        if (zeroShards > 1) f.append(" / dp ").append(zeroShards).append(" (").append(zeroName).append(")");
        if (tp == 1 && zeroShards == 1) f.append(" (not split)");
        return new Term(whole.name() + "_per_gpu", v, f.toString());
    }

    /** Weight matrices per layer (Q, K, V, O and 3 MLP projections) plus embedding and output: tensors of one copy. */
    static int tensorsPerCopy(ModelShape m) {
        return 7 * m.layers() + 2;
    }

    /** Long-lived copies of the weights: the weights themselves and each optimizer state (incl. the master copy). */
    static int stateCopies(SizingRequest r) {
        if (r.mode() == Mode.INFER) return 1;
        int states = switch (r.optimizer()) {
            case ADAMW, ADAM8BIT -> 2;
            case SGD -> 1;
        };
        return 1 + states + (r.mixedPrecision() ? 1 : 0);
    }
}
