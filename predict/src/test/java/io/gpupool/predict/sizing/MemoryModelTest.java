package io.gpupool.predict.sizing;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** The memory model against published rules and figures. */
class MemoryModelTest {
    private static final double GIB = 1L << 30;
    private static final double MIB = 1L << 20;
    private final MemoryModel model = new MemoryModel();

    private static ModelShape llama2(int layers, int hidden, int heads, int kvHeads) {
        return new ModelShape(layers, hidden, heads, kvHeads, 32_000, "test");
    }

    private static double stateBytesPerParam(MemoryEstimate e, long params) {
        return (e.weights().bytes() + e.gradients().bytes() + e.optimizer().bytes()) / params;
    }

    @Test
    void mixedPrecisionAdamwIs16BytesPerParameterBeforeActivations() {
        // ZeRO paper, section 3.1: fp16 weights 2 + fp16 gradients 2 + fp32 master, momentum, variance 12 = 16.
        for (Precision p : new Precision[] {Precision.BF16, Precision.FP16}) {
            SizingRequest r = SizingRequest.builder(7_000_000_000L, Mode.TRAIN, p).build();
            MemoryEstimate e = model.estimate(r, r.requestedLayout());
            assertThat(stateBytesPerParam(e, r.params())).isEqualTo(16.0);
            assertThat(e.weights().bytes()).isEqualTo(14e9);
            assertThat(e.gradients().bytes()).isEqualTo(14e9);
            assertThat(e.optimizer().bytes()).isEqualTo(84e9);
        }
        // fp32 AdamW: 4 + 4 + 8, the same 16; the "16-18 bytes" rule of thumb holds for both.
        SizingRequest fp32 = SizingRequest.builder(7_000_000_000L, Mode.TRAIN, Precision.FP32).build();
        assertThat(stateBytesPerParam(model.estimate(fp32, fp32.requestedLayout()), fp32.params())).isBetween(16.0, 18.0);
    }

    @Test
    void otherOptimizersKeepLessState() {
        long p = 1_000_000_000L;
        SizingRequest sgd = SizingRequest.builder(p, Mode.TRAIN, Precision.BF16).optimizer(OptimizerKind.SGD).build();
        SizingRequest adam8 = SizingRequest.builder(p, Mode.TRAIN, Precision.BF16).optimizer(OptimizerKind.ADAM8BIT).build();
        // SGD with momentum: master 4 + momentum 4; 8-bit Adam: master 4 + 2 x 1 byte + block-wise absmax.
        assertThat(model.estimate(sgd, sgd.requestedLayout()).optimizer().bytes() / p).isEqualTo(8.0);
        assertThat(model.estimate(adam8, adam8.requestedLayout()).optimizer().bytes() / p).isCloseTo(6.0 + 8.0 / 2048, within(1e-9));
        SizingRequest sgd32 = SizingRequest.builder(p, Mode.TRAIN, Precision.FP32).optimizer(OptimizerKind.SGD).build();
        assertThat(model.estimate(sgd32, sgd32.requestedLayout()).optimizer().bytes() / p).isEqualTo(4.0);
    }

    @Test
    void zeroStagesMatchTheZeroPapersFigureOne() {
        // Rajbhandari et al. 2020, figure 1: 7.5B parameters, N_d = 64, K = 12: 120 GB, 31.4 GB, 16.6 GB, 1.9 GB per GPU.
        double[] expectedGb = {120, 31.4, 16.6, 1.9};
        for (int stage = 0; stage <= 3; stage++) {
            SizingRequest r = SizingRequest.builder(7_500_000_000L, Mode.TRAIN, Precision.FP16).build();
            MemoryEstimate e = model.estimate(r, new Layout(1, 64, stage));
            double perGpu = e.perGpu().get(0).bytes() + e.perGpu().get(1).bytes() + e.perGpu().get(2).bytes();
            assertThat(perGpu / 1e9).as("stage %d", stage).isCloseTo(expectedGb[stage], within(0.05));
        }
    }

    @Test
    void inferenceWeightsAreParamsTimesBytes() {
        long p = 7_000_000_000L;
        assertThat(weights(p, Precision.FP32)).isEqualTo(28e9);
        assertThat(weights(p, Precision.BF16)).isEqualTo(14e9);
        assertThat(weights(p, Precision.FP16)).isEqualTo(14e9);
        assertThat(weights(p, Precision.INT8)).isEqualTo(7e9);
        // int4: half a byte plus an fp16 scale and zero point per group of 128 weights.
        assertThat(weights(p, Precision.INT4)).isEqualTo(p * (0.5 + 4.0 / 128));
    }

    private double weights(long params, Precision p) {
        SizingRequest r = SizingRequest.builder(params, Mode.INFER, p).build();
        MemoryEstimate e = model.estimate(r, r.requestedLayout());
        assertThat(e.gradients().bytes()).isZero();
        assertThat(e.optimizer().bytes()).isZero();
        return e.weights().bytes();
    }

    @Test
    void kvCacheOfLlama2MatchesTheModelCards() {
        // Llama-2-7B: 32 layers x 32 KV heads x 128 dims x 2 (K, V) x 2 bytes = 0.5 MiB per token; 2048 tokens = 1 GiB.
        assertThat(kvBytes(6_740_000_000L, llama2(32, 4096, 32, 32), 2048, 1)).isEqualTo(GIB);
        assertThat(kvBytes(6_740_000_000L, llama2(32, 4096, 32, 32), 1, 1)).isEqualTo(0.5 * MIB);
        // Llama-2-13B: 40 layers x 40 heads x 128 x 2 x 2 = 800 KiB per token.
        assertThat(kvBytes(13_000_000_000L, llama2(40, 5120, 40, 40), 1, 1)).isEqualTo(819_200);
        // Llama-2-70B uses grouped-query attention with 8 KV heads: 80 x 8 x 128 x 2 x 2 = 320 KiB per token.
        assertThat(kvBytes(69_000_000_000L, llama2(80, 8192, 64, 8), 1, 1)).isEqualTo(327_680);
        // It grows linearly with tokens and batch.
        assertThat(kvBytes(69_000_000_000L, llama2(80, 8192, 64, 8), 4096, 8)).isEqualTo(327_680.0 * 4096 * 8);
    }

    private double kvBytes(long params, ModelShape shape, int seq, int batch) {
        SizingRequest r = SizingRequest.builder(params, Mode.INFER, Precision.FP16).shape(shape).seq(seq).batch(batch).build();
        return model.estimate(r, r.requestedLayout()).kvCache().bytes();
    }

    @Test
    void defaultShapesComeFromTheNearestPublishedModel() {
        assertThat(ModelShape.resolve(7_000_000_000L, null, null, null, null, null))
                .extracting(ModelShape::layers, ModelShape::hidden, ModelShape::kvHeads).containsExactly(32, 4096, 32);
        assertThat(ModelShape.resolve(70_000_000_000L, null, null, null, null, null))
                .extracting(ModelShape::layers, ModelShape::hidden, ModelShape::heads, ModelShape::kvHeads).containsExactly(80, 8192, 64, 8);
        // 30B is no published model here: derived dimensions imply about the parameters asked for.
        ModelShape derived = ModelShape.resolve(30_000_000_000L, null, null, null, null, null);
        assertThat(derived.source()).startsWith("derived");
        assertThat(derived.impliedParams() / 30e9).isCloseTo(1.0, within(0.1));
        assertThat(derived.headDim()).isEqualTo(128);
    }

    @Test
    void activationsFollowKorthikantiEtAl() {
        // GPT-3 175B dimensions, s = 2048, b = 1: per layer s b h (34 + 5 a s / h) without recomputation,
        // 34 s b h with selective recomputation, 2 s b h with full; plus fp32 logits 4 s b V.
        ModelShape gpt3 = new ModelShape(96, 12288, 96, 96, 50_257, "test");
        double s = 2048, b = 1, h = 12288, a = 96, L = 96, logits = 4 * s * b * 50_257;
        assertThat(activations(gpt3, Recompute.NONE, 1)).isEqualTo(L * s * b * h * (34 + 5 * a * s / h) + logits);
        assertThat(activations(gpt3, Recompute.SELECTIVE, 1)).isEqualTo(L * 34 * s * b * h + logits);
        assertThat(activations(gpt3, Recompute.FULL, 1)).isEqualTo(L * 2 * s * b * h + 34 * s * b * h + logits);
        // The attention scores dominate at this size: 5 a s / h = 80 against 34, so selective keeps (34 + 80) / 34 = 3.4x less.
        assertThat(activations(gpt3, Recompute.NONE, 1) / activations(gpt3, Recompute.SELECTIVE, 1)).isGreaterThan(3.0);
        // Tensor and sequence parallelism divide everything by t.
        SizingRequest r = SizingRequest.builder(175_000_000_000L, Mode.TRAIN, Precision.BF16).shape(gpt3).build();
        assertThat(model.estimate(r, new Layout(8, 1, 0)).perGpu().get(3).bytes()).isEqualTo(activations(gpt3, Recompute.SELECTIVE, 1) / 8);
    }

    private double activations(ModelShape shape, Recompute recompute, int batch) {
        SizingRequest r = SizingRequest.builder(175_000_000_000L, Mode.TRAIN, Precision.BF16).shape(shape)
                .recompute(recompute).batch(batch).build();
        return model.estimate(r, r.requestedLayout()).activations().bytes();
    }

    @Test
    void tensorParallelismSplitsKvHeadsOnlyAsFarAsThereAreHeads() {
        ModelShape l70 = llama2(80, 8192, 64, 8);
        SizingRequest r = SizingRequest.builder(69_000_000_000L, Mode.INFER, Precision.BF16).shape(l70).seq(4096).build();
        double kv = model.estimate(r, r.requestedLayout()).kvCache().bytes();
        assertThat(model.estimate(r, new Layout(4, 1, 0)).perGpu().get(4).bytes()).isEqualTo(kv / 4);
        assertThat(model.estimate(r, new Layout(8, 1, 0)).perGpu().get(4).bytes()).isEqualTo(kv / 8);
        ModelShape fewKv = llama2(80, 8192, 64, 2);
        SizingRequest r2 = SizingRequest.builder(69_000_000_000L, Mode.INFER, Precision.BF16).shape(fewKv).build();
        double kv2 = model.estimate(r2, r2.requestedLayout()).kvCache().bytes();
        assertThat(model.estimate(r2, new Layout(8, 1, 0)).perGpu().get(4).bytes()).isEqualTo(kv2 / 2);
    }

    @Test
    void allocatorReservesMoreThanTensorsAllocateAndSaysWhy() {
        SizingRequest r = SizingRequest.builder(7_000_000_000L, Mode.TRAIN, Precision.BF16).build();
        MemoryEstimate e = model.estimate(r, r.requestedLayout());
        double allocated = e.perGpu().stream().mapToDouble(Term::bytes).sum();
        assertThat(e.allocated().bytes()).isEqualTo(allocated);
        assertThat(e.reserved().bytes()).isEqualTo(allocated + e.rounding().bytes() + e.fragmentation().bytes());
        // Short-lived memory (activations + gradients) is 15% fragmented: waste = short x 0.15 / 0.85.
        double shortLived = e.perGpu().get(1).bytes() + e.perGpu().get(3).bytes();
        assertThat(e.fragmentation().bytes()).isCloseTo(shortLived * 0.15 / 0.85, within(1.0));
        // Rounding: 7 matrices per layer + 2, per copy (bf16 weights, fp32 master, m, v), 1 MiB each on average.
        assertThat(e.rounding().bytes()).isEqualTo((7 * 32 + 2) * 4 * MIB);
        assertThat(e.total().bytes()).isEqualTo(e.reserved().bytes() + SizingRequest.DEFAULT_CONTEXT_BYTES);
        for (Term t : e.all()) assertThat(t.explain()).contains(" = ");
    }
}
