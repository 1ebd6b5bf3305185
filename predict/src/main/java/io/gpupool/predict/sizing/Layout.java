package io.gpupool.predict.sizing;

/**
 * How a job spreads over GPUs: {@code tp}-way tensor parallelism inside a replica, {@code dp} data-parallel
 * replicas, and the ZeRO stage that shards training state over the replicas (1: optimizer states,
 * 2: + gradients, 3: + weights; Rajbhandari et al. 2020).
 */
public record Layout(int tp, int dp, int zero) {
    public Layout {
        if (tp < 1) throw new io.gpupool.model.SpecException("--tp", "tp", "must be >= 1, got " + tp);
        if (dp < 1) throw new io.gpupool.model.SpecException("--dp", "dp", "must be >= 1, got " + dp);
        if (zero < 0 || zero > 3) throw new io.gpupool.model.SpecException("--zero", "zero", "must be 0, 1, 2 or 3, got " + zero);
    }

    public int gpus() {
        return tp * dp;
    }

    /** Divisor of the optimizer states, gradients or weights (stage 1, 2, 3) across replicas. */
    int zeroShards(int fromStage) {
        return zero >= fromStage ? dp : 1;
    }

    @Override public String toString() {
        return "tp=" + tp + " dp=" + dp + (zero > 0 ? " zero=" + zero : "");
    }
}
