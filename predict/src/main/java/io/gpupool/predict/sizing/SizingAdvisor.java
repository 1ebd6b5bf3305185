package io.gpupool.predict.sizing;

import io.gpupool.model.GpuCatalog;
import io.gpupool.model.GpuModel;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Answers "which GPU, and how many?": estimates the memory of the job ({@link MemoryModel}), then for every
 * model of the catalog finds the smallest layout that fits one GPU's memory, and estimates its step time
 * ({@link StepTimeModel}) and relative cost (energy per token at board power; the catalog has no prices).
 *
 * <p>Layouts tried, fewest GPUs first, then lower ZeRO stage (less communication), then less tensor
 * parallelism: tp in {1, 2, 4, 8} (dividing the heads; one server), and when training ZeRO stage 0..3 with
 * dp in {1, 2, 4, ..., 1024}. A given --tp, --dp or --zero is kept fixed. A job fits a GPU when its per-GPU
 * need is at most {@value #USABLE_SHARE} of the card's memory (the driver keeps some; growth needs slack).
 */
public final class SizingAdvisor {
    public static final double USABLE_SHARE = 0.95;
    static final int MAX_TP = 8;
    static final int MAX_DP = 1024;

    private final GpuCatalog catalog;
    private final MemoryModel memory;
    private final StepTimeModel time = new StepTimeModel();

    public SizingAdvisor(GpuCatalog catalog, MemoryModel memory) {
        this.catalog = catalog;
        this.memory = memory;
    }

    public SizingAdvisor() {
        this(GpuCatalog.standard(), new MemoryModel());
    }

    public MemoryEstimate estimate(SizingRequest r) {
        return memory.estimate(r, r.requestedLayout());
    }

    public Advice advise(SizingRequest r) {
        List<Layout> layouts = candidateLayouts(r);
        List<Fit> fits = new ArrayList<>();
        List<String> notFitting = new ArrayList<>();
        for (GpuModel gpu : catalog.all()) {
            if (gpu.productName().contains("undisclosed")) continue;   // placeholders (Alibaba G2/G3), not real cards
            double usable = usableBytes(gpu);
            MemoryEstimate fit = null;
            MemoryEstimate smallest = null;
            for (Layout l : layouts) {
                MemoryEstimate e = memory.estimate(r, l);
                if (smallest == null || e.total().bytes() < smallest.total().bytes()) smallest = e;
                if (e.total().bytes() <= usable) {
                    fit = e;
                    break;
                }
            }
            if (fit != null) {
                fits.add(new Fit(gpu, fit, time.estimate(r, fit.layout(), fit, gpu)));
            } else if (smallest != null) {
                notFitting.add(gpu.id() + ": needs " + Units.gib(smallest.total().bytes()) + " per GPU at best ("
                        + smallest.layout() + "), has " + Units.gib(usable) + " usable");
            }
        }
        double cheapest = fits.stream().mapToDouble(f -> f.energyPerToken(r)).min().orElse(1);
        List<Recommendation> recs = new ArrayList<>();
        for (Fit f : fits) {
            recs.add(new Recommendation(f.gpu(), f.memory().layout(), f.memory(), f.time(), f.energyPerToken(r) / cheapest, notes(r, f)));
        }
        recs.sort(Comparator.comparingInt(Recommendation::count).thenComparingDouble(rec -> rec.time().stepSeconds()));
        return new Advice(r, estimate(r), recs, notFitting);
    }

    /** Bytes of a card's memory a job may plan to use. */
    public static double usableBytes(GpuModel gpu) {
        return gpu.memoryMib() * Units.MIB * USABLE_SHARE;
    }

    static List<Layout> candidateLayouts(SizingRequest r) {
        List<Integer> tps = new ArrayList<>();
        if (r.tp() != null) tps.add(r.tp());
        else for (int t = 1; t <= MAX_TP; t *= 2) if (r.shape().heads() % t == 0) tps.add(t);
        List<Integer> zeros = new ArrayList<>();
        if (r.zero() != null) zeros.add(r.zero());
        else if (r.mode() == Mode.TRAIN) zeros.addAll(List.of(0, 1, 2, 3));
        else zeros.add(0);
        List<Layout> out = new ArrayList<>();
        for (int t : tps) {
            for (int z : zeros) {
                if (r.dp() != null) {
                    out.add(new Layout(t, r.dp(), z));
                    continue;
                }
                // Without ZeRO more replicas bring no memory relief: one replica is the smallest layout. With a
                // searched stage, dp = 1 is the same layout as stage 0 and is left out.
                int maxDp = z == 0 ? 1 : MAX_DP;
                int minDp = z == 0 || r.zero() != null ? 1 : 2;
                for (int d = minDp; d <= maxDp; d *= 2) out.add(new Layout(t, d, z));
            }
        }
        out.sort(Comparator.comparingInt(Layout::gpus).thenComparingInt(Layout::zero).thenComparingInt(Layout::tp));
        return out;
    }

    private static List<String> notes(SizingRequest r, Fit f) {
        List<String> notes = new ArrayList<>();
        if (f.memory().layout().tp() > 1 && !f.gpu().hasNvlink()) {
            notes.add("TP over PCIe (no NVLink): slower than estimated");
        }
        if (r.precision() == Precision.BF16 && f.gpu().bf16Tflops() == 0) {
            notes.add("no bf16: use fp16");
        }
        return notes;
    }

    private record Fit(GpuModel gpu, MemoryEstimate memory, StepTimeModel.StepTime time) {
        double energyPerToken(SizingRequest r) {
            Layout l = memory.layout();
            return l.gpus() * (double) gpu.tdpWatts() * time.stepSeconds() / Recommendation.tokensPerStep(r, l);
        }
    }
}
