package io.gpupool.predict.sizing;

import java.util.List;

/**
 * The advisor's answer.
 *
 * @param request         what was asked
 * @param requested       the memory estimate under the requested layout (given tp/dp/zero, else 1/1/0)
 * @param recommendations GPU models that hold the job, fewest GPUs first, then fastest step
 * @param notFitting      one line per catalog model that cannot hold the job in any layout tried
 */
public record Advice(SizingRequest request, MemoryEstimate requested, List<Recommendation> recommendations, List<String> notFitting) {
    public Advice {
        recommendations = List.copyOf(recommendations);
        notFitting = List.copyOf(notFitting);
    }
}
