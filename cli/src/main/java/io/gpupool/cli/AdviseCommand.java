package io.gpupool.cli;

import io.gpupool.predict.sizing.Advice;
import io.gpupool.predict.sizing.MemoryEstimate;
import io.gpupool.predict.sizing.Mode;
import io.gpupool.predict.sizing.ModelShape;
import io.gpupool.predict.sizing.OptimizerKind;
import io.gpupool.predict.sizing.ParamCount;
import io.gpupool.predict.sizing.Precision;
import io.gpupool.predict.sizing.Recommendation;
import io.gpupool.predict.sizing.Recompute;
import io.gpupool.predict.sizing.SizingAdvisor;
import io.gpupool.predict.sizing.SizingRequest;
import io.gpupool.predict.sizing.Term;
import io.gpupool.predict.sizing.Units;
import io.gpupool.model.SpecException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code gpupool advise}: the GPU memory a model needs to train or serve, and the GPUs of the catalog that hold it. */
@Command(name = "advise",
        header = "Estimate a model's GPU memory and recommend GPU models and counts.",
        description = "Estimates weights, gradients, optimizer states, activations and KV cache; what PyTorch's caching "
                + "allocator reserves beyond what tensors allocate, plus the CUDA context; the per-GPU need under the "
                + "given parallelism; then the GPU models of the catalog that hold the job, with the GPU count, the "
                + "layout, the estimated time per step and the relative cost. Formulas: docs/sizing.md.%n")
public final class AdviseCommand implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Option(names = "--params", required = true, paramLabel = "N", description = "Parameter count: 7B, 1.3B, 350M, 70e9.")
    String params;

    @Option(names = "--mode", required = true, paramLabel = "MODE", description = "train or infer.")
    String mode;

    @Option(names = "--precision", defaultValue = "bf16", paramLabel = "P",
            description = "Weights: fp32, bf16, fp16, int8 or int4 (int8/int4: inference only) (default: ${DEFAULT-VALUE}).")
    String precision;

    @Option(names = "--optimizer", paramLabel = "OPT", description = "adamw (default when training), sgd or adam8bit.")
    String optimizer;

    @Option(names = "--batch", defaultValue = "1", paramLabel = "B",
            description = "Sequences per micro-batch of one data-parallel replica (default: ${DEFAULT-VALUE}).")
    int batch;

    @Option(names = "--seq", defaultValue = "2048", paramLabel = "S",
            description = "Tokens per sequence; when inferring prompt + generated tokens (default: ${DEFAULT-VALUE}).")
    int seq;

    @Option(names = "--layers", paramLabel = "L", description = "Transformer layers (default: from the nearest published model, else derived from --params).")
    Integer layers;

    @Option(names = "--hidden", paramLabel = "H", description = "Hidden size.")
    Integer hidden;

    @Option(names = "--heads", paramLabel = "A", description = "Attention heads (default: hidden / 128).")
    Integer heads;

    @Option(names = "--kv-heads", paramLabel = "K", description = "Key/value heads; fewer than --heads with grouped-query attention (default: heads).")
    Integer kvHeads;

    @Option(names = "--vocab", paramLabel = "V", description = "Vocabulary size (default: the published model's, else 32000).")
    Integer vocab;

    @Option(names = "--tp", paramLabel = "N", description = "Tensor-parallel degree (default: 1 for the stated need; searched for recommendations).")
    Integer tp;

    @Option(names = "--dp", paramLabel = "N", description = "Data-parallel replicas (default: 1; searched with ZeRO).")
    Integer dp;

    @Option(names = "--zero", paramLabel = "0|1|2|3", description = "ZeRO stage when training (default: 0; searched for recommendations).")
    Integer zero;

    @Option(names = "--recompute", defaultValue = "selective", paramLabel = "R",
            description = "Activation recomputation when training: none, selective or full (default: ${DEFAULT-VALUE}).")
    String recompute;

    @Option(names = "--context-mib", defaultValue = "512", paramLabel = "MIB",
            description = "CUDA context per GPU process in MiB (default: ${DEFAULT-VALUE}).")
    long contextMib;

    @Option(names = "--mfu", defaultValue = "0.4", paramLabel = "F",
            description = "Model FLOPs utilization assumed for step times (default: ${DEFAULT-VALUE}).")
    double mfu;

    @Option(names = "--explain", description = "Show the formula behind every number.")
    boolean explain;

    @Mixin TableOrJson output;

    @Override
    public Integer call() {
        Mode m = Mode.parse(mode);
        long p = ParamCount.parse(params);
        SizingRequest request = new SizingRequest(p, m, Precision.parse(precision),
                optimizer == null ? null : OptimizerKind.parse(optimizer), batch, seq,
                ModelShape.resolve(p, layers, hidden, heads, kvHeads, vocab), Recompute.parse(recompute),
                tp, dp, zero, checkedContextBytes(), mfu);
        Advice advice = new SizingAdvisor().advise(request);
        PrintWriter out = spec.commandLine().getOut();
        if (output.json()) Json.print(out, json(advice, explain));
        else out.print(text(advice, explain));
        out.flush();
        return 0;
    }

    private long checkedContextBytes() {
        if (contextMib < 0) throw new SpecException("--context-mib", "context-mib", "must be >= 0, got " + contextMib);
        return contextMib << 20;
    }

    // ---- text ------------------------------------------------------------------------------------

    static String text(Advice a, boolean explain) {
        SizingRequest r = a.request();
        MemoryEstimate e = a.requested();
        ModelShape s = r.shape();
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "%s params, %s, %s%s, batch %d x seq %d%n", ParamCount.format(r.params()), r.mode().label(),
                r.precision().label(), r.optimizer() != null ? ", " + r.optimizer().label() : "", r.batch(), r.seq()));
        sb.append(String.format(Locale.ROOT, "shape: %d layers, hidden %d, %d heads, %d KV heads, head dim %d, vocab %d (%s)%n%n",
                s.layers(), s.hidden(), s.heads(), s.kvHeads(), s.headDim(), s.vocab(), s.source()));

        TextTable t = new TextTable("MEMORY", "ONE REPLICA", "PER GPU (" + e.layout() + ")").alignRight(1, 2);
        List<Term> whole = e.components();
        for (int i = 0; i < whole.size(); i++) {
            t.row(whole.get(i).name().replace('_', ' '), gib(whole.get(i).bytes()), gib(e.perGpu().get(i).bytes()));
        }
        t.row("allocated", "", gib(e.allocated().bytes()));
        t.row("+ allocator rounding", "", gib(e.rounding().bytes()));
        t.row("+ fragmentation", "", gib(e.fragmentation().bytes()));
        t.row("= reserved", "", gib(e.reserved().bytes()));
        t.row("+ CUDA context", "", gib(e.context().bytes()));
        t.row("= needed per GPU", "", gib(e.total().bytes()));
        sb.append(t.render());
        if (r.mode() == Mode.TRAIN) {
            sb.append(String.format(Locale.ROOT, "model state: %.1f bytes per parameter (weights + gradients + optimizer)%n",
                    stateBytes(e) / r.params()));
        }
        if (explain) {
            sb.append("\nhow:\n");
            for (Term term : e.all()) sb.append("  ").append(term.explain()).append('\n');
        }

        sb.append("\nRECOMMENDATIONS (fewest GPUs first; cost = energy per token at board power, GPUs x TDP x step time / tokens, relative to the lowest)\n");
        if (a.recommendations().isEmpty()) sb.append("none: no catalog GPU holds this job in the layouts tried\n");
        else {
            TextTable rt = new TextTable("GPU", "COUNT", "LAYOUT", "PER GPU", "OF MEMORY",
                    r.mode() == Mode.TRAIN ? "STEP" : "PREFILL", r.mode() == Mode.TRAIN ? "TOKENS/S" : "DECODE/TOKEN", "REL. COST", "NOTES")
                    .alignRight(1, 3, 4, 5, 6, 7);
            for (Recommendation rec : a.recommendations()) {
                double share = rec.memory().total().bytes() / (rec.gpu().memoryMib() * 1048576.0);
                double third = r.mode() == Mode.TRAIN
                        ? (double) r.batch() * r.seq() * rec.layout().dp() / rec.time().stepSeconds()
                        : rec.time().decodeSecondsPerToken();
                rt.row(rec.gpu().id(), rec.count(), rec.layout(), gib(rec.memory().total().bytes()),
                        String.format(Locale.ROOT, "%.0f%%", share * 100), seconds(rec.time().stepSeconds()),
                        r.mode() == Mode.TRAIN ? String.format(Locale.ROOT, "%,.0f", third) : seconds(third),
                        String.format(Locale.ROOT, "%.2f", rec.relativeCost()), String.join("; ", rec.notes()));
            }
            sb.append(rt.render());
        }
        if (!a.notFitting().isEmpty()) {
            sb.append("\ndoes not fit:\n");
            for (String n : a.notFitting()) sb.append("  ").append(n).append('\n');
        }
        if (explain && !a.recommendations().isEmpty()) {
            sb.append(String.format(Locale.ROOT, "%nhow: a GPU holds the job when the per-GPU need is at most %.0f%% of its memory; "
                    + "the layout is the one with the fewest GPUs, then the lowest ZeRO stage, then the least tensor parallelism.%n",
                    SizingAdvisor.USABLE_SHARE * 100));
            for (Recommendation rec : a.recommendations()) {
                sb.append("  ").append(rec.gpu().id()).append(" x ").append(rec.count()).append(" (").append(rec.layout()).append("):\n");
                for (String line : rec.time().explanation()) sb.append("    ").append(line).append('\n');
                sb.append(String.format(Locale.ROOT, "    energy per token = %d GPUs x %d W x %s / (B %d x S %d x dp %d) tokens = %.3g J%n",
                        rec.count(), rec.gpu().tdpWatts(), seconds(rec.time().stepSeconds()), r.batch(), r.seq(), rec.layout().dp(),
                        rec.energyPerTokenJoules(r)));
            }
        }
        return sb.toString();
    }

    private static double stateBytes(MemoryEstimate e) {
        return e.weights().bytes() + e.gradients().bytes() + e.optimizer().bytes();
    }

    private static String gib(double bytes) {
        return bytes == 0 ? "0" : Units.gib(bytes);
    }

    private static String seconds(double s) {
        return Units.seconds(s);
    }

    // ---- json ------------------------------------------------------------------------------------

    static Map<String, Object> json(Advice a, boolean explain) {
        SizingRequest r = a.request();
        MemoryEstimate e = a.requested();
        ModelShape s = r.shape();
        Map<String, Object> o = new LinkedHashMap<>();
        o.put("params", r.params());
        o.put("mode", r.mode().label());
        o.put("precision", r.precision().label());
        o.put("optimizer", r.optimizer() == null ? null : r.optimizer().label());
        o.put("batch", r.batch());
        o.put("seq", r.seq());
        o.put("recompute", r.mode() == Mode.TRAIN ? r.recompute().label() : null);
        Map<String, Object> shape = new LinkedHashMap<>();
        shape.put("layers", s.layers());
        shape.put("hidden", s.hidden());
        shape.put("heads", s.heads());
        shape.put("kv_heads", s.kvHeads());
        shape.put("head_dim", s.headDim());
        shape.put("vocab", s.vocab());
        shape.put("source", s.source());
        o.put("shape", shape);
        o.put("layout", layout(e));
        for (Term term : e.components()) o.put(term.name() + "_bytes", term.roundedBytes());
        Map<String, Object> perGpu = new LinkedHashMap<>();
        for (Term term : e.perGpu()) perGpu.put(term.name().replace("_per_gpu", "") + "_bytes", term.roundedBytes());
        o.put("per_gpu", perGpu);
        o.put("allocated_bytes", e.allocated().roundedBytes());
        o.put("rounding_bytes", e.rounding().roundedBytes());
        o.put("fragmentation_bytes", e.fragmentation().roundedBytes());
        o.put("reserved_bytes", e.reserved().roundedBytes());
        o.put("cuda_context_bytes", e.context().roundedBytes());
        o.put("per_gpu_bytes", e.total().roundedBytes());
        List<Map<String, Object>> recs = new ArrayList<>();
        for (Recommendation rec : a.recommendations()) {
            Map<String, Object> x = new LinkedHashMap<>();
            x.put("model", rec.gpu().id());
            x.put("count", rec.count());
            x.putAll(layout(rec.memory()));
            x.put("per_gpu_bytes", rec.memory().total().roundedBytes());
            x.put("gpu_memory_bytes", rec.gpu().memoryMib() * (1L << 20));
            x.put("step_seconds", rec.time().stepSeconds());
            if (r.mode() == Mode.INFER) x.put("decode_seconds_per_token", rec.time().decodeSecondsPerToken());
            x.put("step_flops", rec.time().stepFlops());
            x.put("energy_per_token_joules", rec.energyPerTokenJoules(r));
            x.put("relative_cost", rec.relativeCost());
            x.put("notes", rec.notes());
            if (explain) x.put("explanation", rec.time().explanation());
            recs.add(x);
        }
        o.put("recommendations", recs);
        o.put("not_fitting", a.notFitting());
        if (explain) o.put("explanation", e.all().stream().map(Term::explain).toList());
        return o;
    }

    private static Map<String, Object> layout(MemoryEstimate e) {
        Map<String, Object> l = new LinkedHashMap<>();
        l.put("tp", e.layout().tp());
        l.put("dp", e.layout().dp());
        l.put("zero", e.layout().zero());
        return l;
    }
}
