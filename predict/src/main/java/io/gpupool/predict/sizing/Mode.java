package io.gpupool.predict.sizing;

import io.gpupool.model.SpecException;

/** What the GPUs will do with the model. */
public enum Mode {
    TRAIN, INFER;

    public static Mode parse(String s) {
        if ("train".equalsIgnoreCase(s)) return TRAIN;
        if ("infer".equalsIgnoreCase(s) || "inference".equalsIgnoreCase(s)) return INFER;
        throw new SpecException("--mode", "mode", "must be train or infer, got '" + s + "'");
    }

    public String label() { return this == TRAIN ? "train" : "infer"; }
}
