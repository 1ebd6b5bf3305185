package io.gpupool.predict.sizing;

import io.gpupool.model.GangShape;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.GpuMemorySizer;
import io.gpupool.model.GpuModel;
import io.gpupool.model.ModelSize;
import io.gpupool.model.SpecException;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The sizing advisor as the engine's drivers use it: a job that names its model size but no GPU memory gets the
 * advisor's per-GPU need (reserved memory plus CUDA context, {@link MemoryEstimate#total()}) under the job's own
 * layout: tensor parallelism over each replica's GPUs (when that divides the attention heads, else every GPU holds a
 * whole copy), data parallelism over its replicas, no ZeRO sharding, the advisor's defaults for the rest (batch 1,
 * 2048 tokens, AdamW when training, selective recomputation). A job that shards more gives its memory itself.
 */
public final class AdvisorMemorySizer implements GpuMemorySizer {
    private final GpuCatalog catalog;
    private final SizingAdvisor advisor;
    private final Map<List<Object>, Need> needs = new ConcurrentHashMap<>();   // a trace repeats a few sizes many times

    public AdvisorMemorySizer(GpuCatalog catalog) {
        this.catalog = catalog;
        this.advisor = new SizingAdvisor(catalog, new MemoryModel());
    }

    @Override
    public Need need(ModelSize size, GangShape shape) {
        List<Object> key = List.of(size, shape);
        Need known = needs.get(key);
        if (known != null) return known;
        Need n = compute(size, shape);
        if (needs.size() < 10_000) needs.put(key, n);
        return n;
    }

    private Need compute(ModelSize size, GangShape shape) {
        long params = field("params", () -> ParamCount.parse(size.params()));
        Mode mode = field("mode", () -> Mode.parse(size.mode()));
        Precision precision = field("precision", () -> Precision.parse(size.precision()));
        int heads = field("precision", () -> SizingRequest.builder(params, mode, precision).build()).shape().heads();
        int tp = heads % shape.gpusPerReplica() == 0 ? shape.gpusPerReplica() : 1;
        SizingRequest request = field("precision", () -> SizingRequest.builder(params, mode, precision)
                .tp(tp).dp(shape.replicas()).zero(0).build());
        double bytes = advisor.estimate(request).total().bytes();
        Set<String> fit = new LinkedHashSet<>();
        for (GpuModel gpu : catalog.all()) {
            if (gpu.productName().contains("undisclosed")) continue;   // placeholders (Alibaba G2/G3) with no real memory size
            if (SizingAdvisor.usableBytes(gpu) >= bytes) fit.add(gpu.id());
        }
        String why = ParamCount.format(params) + " " + mode.label() + " " + precision.label() + " on " + request.requestedLayout()
                + (tp != shape.gpusPerReplica() ? " (" + shape.gpusPerReplica() + " GPUs do not divide " + heads + " heads: each holds a copy)" : "")
                + " needs " + Units.gib(bytes) + " per GPU";
        return new Need((long) Math.ceil(bytes / Units.MIB), fit, why);
    }

    /** Restates an advisor's complaint (worded for its command line) as a rule about the job's field. */
    private static <T> T field(String name, Supplier<T> read) {
        try {
            return read.get();
        } catch (SpecException e) {
            throw new SpecException(null, name, e.rule());
        }
    }
}
