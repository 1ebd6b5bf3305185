package io.gpupool.predict.sizing;

import io.gpupool.model.SpecException;

import java.util.List;

/**
 * The transformer dimensions that activations and the KV cache depend on.
 *
 * @param layers  transformer layers (L)
 * @param hidden  model width (h)
 * @param heads   attention (query) heads (a)
 * @param kvHeads key/value heads (K; fewer than {@code heads} with grouped-query attention)
 * @param vocab   vocabulary size (V), for the logits
 * @param source  where the dimensions come from, for --explain
 */
public record ModelShape(int layers, int hidden, int heads, int kvHeads, int vocab, String source) {
    /** Llama-2's tokenizer; used when a shape names no vocabulary. */
    public static final int DEFAULT_VOCAB = 32_000;
    /** Head dimension assumed when only the width is known (Llama, GPT-3 and most models since use 128). */
    public static final int DEFAULT_HEAD_DIM = 128;

    public ModelShape {
        if (layers < 1) throw new SpecException("--layers", "layers", "must be >= 1, got " + layers);
        if (hidden < 1) throw new SpecException("--hidden", "hidden", "must be >= 1, got " + hidden);
        if (heads < 1 || hidden % heads != 0) {
            throw new SpecException("--heads", "heads", "must divide the hidden size " + hidden + ", got " + heads);
        }
        if (kvHeads < 1 || kvHeads > heads || heads % kvHeads != 0) {
            throw new SpecException("--kv-heads", "kv-heads", "must divide the number of heads " + heads + ", got " + kvHeads);
        }
        if (vocab < 1) throw new SpecException("--vocab", "vocab", "must be >= 1, got " + vocab);
    }

    public int headDim() {
        return hidden / heads;
    }

    /** Parameters the shape implies, 12 L h^2 (Kaplan et al. 2020, section 2.1; embeddings excluded). */
    public double impliedParams() {
        return 12.0 * layers * (double) hidden * hidden;
    }

    /** A published architecture: its parameter count and dimensions (model cards / config.json). */
    record Reference(String name, double params, int layers, int hidden, int heads, int kvHeads, int vocab) {}

    static final List<Reference> REFERENCES = List.of(
            new Reference("GPT-2 XL", 1.56e9, 48, 1600, 25, 25, 50_257),
            new Reference("Llama-2-7B", 6.74e9, 32, 4096, 32, 32, 32_000),
            new Reference("Llama-3-8B", 8.03e9, 32, 4096, 32, 8, 128_256),
            new Reference("Llama-2-13B", 13.0e9, 40, 5120, 40, 40, 32_000),
            new Reference("Llama-2-70B", 69.0e9, 80, 8192, 64, 8, 32_000),
            new Reference("GPT-3 175B", 175e9, 96, 12288, 96, 96, 50_257));

    /**
     * The shape for a model of {@code params} parameters: the given dimensions where given (null = not
     * given); otherwise the published architecture nearest in size when one is within 25%; otherwise
     * dimensions derived from params = 12 L h^2 with Llama-2-7B's aspect ratio h = 128 L.
     */
    public static ModelShape resolve(long params, Integer layers, Integer hidden, Integer heads, Integer kvHeads, Integer vocab) {
        if (layers == null && hidden == null) {
            Reference ref = nearest(params);
            if (ref != null) {
                int a = heads != null ? heads : ref.heads();
                int k = kvHeads != null ? kvHeads : (heads != null ? a : ref.kvHeads());
                return new ModelShape(ref.layers(), ref.hidden(), a, k, vocab != null ? vocab : ref.vocab(),
                        ref.name() + "'s dimensions, the published model nearest to " + ParamCount.format(params));
            }
        }
        String source;
        int l;
        int h;
        if (layers != null && hidden != null) {
            l = layers;
            h = hidden;
            source = "given";
        } else if (layers != null) {
            l = layers;
            h = roundTo(Math.sqrt(params / (12.0 * l)), DEFAULT_HEAD_DIM);
            source = "hidden from params = 12 L h^2";
        } else if (hidden != null) {
            h = hidden;
            l = Math.max(1, (int) Math.round(params / (12.0 * h * h)));
            source = "layers from params = 12 L h^2";
        } else {
            l = Math.max(1, (int) Math.round(Math.cbrt(params / (12.0 * DEFAULT_HEAD_DIM * DEFAULT_HEAD_DIM))));
            h = roundTo(Math.sqrt(params / (12.0 * l)), DEFAULT_HEAD_DIM);
            source = "derived from params = 12 L h^2 with h = 128 L (Llama-2-7B's aspect ratio)";
        }
        int a;
        if (heads != null) a = heads;
        else if (h % DEFAULT_HEAD_DIM == 0) a = h / DEFAULT_HEAD_DIM;
        else throw new SpecException("--heads", "heads", "hidden size " + h + " is not a multiple of 128: give --heads");
        return new ModelShape(l, h, a, kvHeads != null ? kvHeads : a, vocab != null ? vocab : DEFAULT_VOCAB, source);
    }

    private static Reference nearest(long params) {
        Reference best = null;
        double bestDistance = Math.log(1.25);
        for (Reference r : REFERENCES) {
            double d = Math.abs(Math.log(params / r.params()));
            if (d <= bestDistance) {
                best = r;
                bestDistance = d;
            }
        }
        return best;
    }

    private static int roundTo(double v, int multiple) {
        return (int) Math.max(multiple, Math.round(v / multiple) * multiple);
    }
}
