package io.gpupool.predict.sizing;

import io.gpupool.model.GpuCatalog;
import io.gpupool.model.GpuModel;
import io.gpupool.model.SpecException;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class SizingAdvisorTest {
    private final SizingAdvisor advisor = new SizingAdvisor();

    private static Optional<Recommendation> on(Advice a, String gpu) {
        return a.recommendations().stream().filter(r -> r.gpu().id().equals(gpu)).findFirst();
    }

    @Test
    void sevenBillionServesOnOneCardButTrainsOnSeveral() {
        Advice infer = advisor.advise(SizingRequest.builder(7_000_000_000L, Mode.INFER, Precision.BF16).build());
        assertThat(on(infer, "A100-80GB")).get().extracting(Recommendation::count).isEqualTo(1);
        assertThat(on(infer, "L4")).get().extracting(Recommendation::count).isEqualTo(1);
        // A 16 GB card holds 13 GiB of weights, 1 GiB of KV cache, allocator slack and context only just;
        // four sequences need a second one.
        Recommendation t4 = on(infer, "T4").orElseThrow();
        assertThat(t4.count()).isEqualTo(1);
        assertThat(t4.memory().total().bytes() / (t4.gpu().memoryMib() * 1048576.0)).isGreaterThan(0.9);
        Advice four = advisor.advise(SizingRequest.builder(7_000_000_000L, Mode.INFER, Precision.BF16).batch(4).build());
        assertThat(on(four, "T4").orElseThrow().count()).isEqualTo(2);

        Advice train = advisor.advise(SizingRequest.builder(7_000_000_000L, Mode.TRAIN, Precision.BF16).build());
        assertThat(train.requested().total().bytes()).isGreaterThan(112e9);   // 16 bytes/param alone
        assertThat(on(train, "A100-80GB").orElseThrow().count()).isEqualTo(2);
        assertThat(on(train, "H200").orElseThrow().count()).isEqualTo(1);
        for (Recommendation r : train.recommendations()) {
            assertThat(r.memory().total().bytes()).isLessThanOrEqualTo(SizingAdvisor.usableBytes(r.gpu()));
        }
    }

    @Test
    void recommendationsTakeTheSmallestLayoutThatFits() {
        Advice a = advisor.advise(SizingRequest.builder(70_000_000_000L, Mode.INFER, Precision.BF16).build());
        Recommendation h100 = on(a, "H100-80GB").orElseThrow();
        assertThat(h100.count()).isEqualTo(2);   // 140 GB of weights
        // one fewer GPU does not fit
        MemoryEstimate one = new MemoryModel().estimate(a.request(), new Layout(1, 1, 0));
        assertThat(one.total().bytes()).isGreaterThan(SizingAdvisor.usableBytes(h100.gpu()));
        assertThat(a.recommendations()).extracting(Recommendation::relativeCost).contains(1.0).allSatisfy(c -> assertThat(c).isGreaterThanOrEqualTo(1.0));
        assertThat(a.recommendations()).isSortedAccordingTo(java.util.Comparator.comparingInt(Recommendation::count));
    }

    @Test
    void givenParallelismIsKept() {
        SizingRequest r = SizingRequest.builder(13_000_000_000L, Mode.TRAIN, Precision.BF16).tp(4).dp(8).zero(3).build();
        Advice a = advisor.advise(r);
        assertThat(a.requested().layout()).isEqualTo(new Layout(4, 8, 3));
        assertThat(a.recommendations()).allSatisfy(rec -> assertThat(rec.layout()).isEqualTo(new Layout(4, 8, 3)));
        assertThat(a.notFitting()).allSatisfy(line -> assertThat(line).contains("tp=4 dp=8 zero=3"));
    }

    @Test
    void stepTimeIsFlopsOverPeakTimesEfficiency() {
        SizingRequest r = SizingRequest.builder(7_000_000_000L, Mode.TRAIN, Precision.BF16).build();
        GpuModel a100 = GpuCatalog.standard().require("A100-80GB", "test");
        Layout l = new Layout(2, 1, 0);
        MemoryEstimate e = new MemoryModel().estimate(r, l);
        StepTimeModel.StepTime t = new StepTimeModel().estimate(r, l, e, a100);
        double tokens = 2048;
        double flops = 6 * (7e9 + 32.0 * 2048 * 4096) * tokens;   // 6 P + 6 L S h per token
        assertThat(t.stepFlops()).isEqualTo(flops);
        assertThat(t.stepSeconds()).isCloseTo(flops / (2 * 312e12 * 0.4), within(1e-9));

        SizingRequest inf = SizingRequest.builder(7_000_000_000L, Mode.INFER, Precision.BF16).build();
        MemoryEstimate ie = new MemoryModel().estimate(inf, inf.requestedLayout());
        StepTimeModel.StepTime it = new StepTimeModel().estimate(inf, inf.requestedLayout(), ie, a100);
        assertThat(it.stepFlops()).isEqualTo(2 * (7e9 + 32.0 * 2048 * 4096) * tokens);
        // decoding is bound by reading the weights and KV cache once per token
        double bytes = ie.weights().bytes() + ie.kvCache().bytes();
        assertThat(it.decodeSecondsPerToken()).isCloseTo(bytes / (2039e9 * StepTimeModel.BANDWIDTH_EFFICIENCY), within(1e-9));
    }

    @Test
    void badRequestsAreRefusedWithTheOptionNamed() {
        assertRefused(() -> SizingRequest.builder(7_000_000_000L, Mode.TRAIN, Precision.INT4).build(), "--precision");
        assertRefused(() -> SizingRequest.builder(7_000_000_000L, Mode.INFER, Precision.BF16).zero(2).build(), "--zero");
        assertRefused(() -> SizingRequest.builder(7_000_000_000L, Mode.TRAIN, Precision.BF16).tp(3).build(), "--tp");
        assertRefused(() -> ParamCount.parse("seven"), "--params");
        assertRefused(() -> ModelShape.resolve(7_000_000_000L, 32, 4096, 32, 5, null), "--kv-heads");
        assertThat(ParamCount.parse("7B")).isEqualTo(7_000_000_000L);
        assertThat(ParamCount.parse("1.3b")).isEqualTo(1_300_000_000L);
        assertThat(ParamCount.parse("350M")).isEqualTo(350_000_000L);
        assertThat(ParamCount.parse("70e9")).isEqualTo(70_000_000_000L);
    }

    /** Refused as bad input, naming the command-line option it is about. */
    private static void assertRefused(ThrowingCallable call, String option) {
        assertThatThrownBy(call).isInstanceOfSatisfying(SpecException.class, e -> assertThat(e.where()).isEqualTo(option));
    }
}
