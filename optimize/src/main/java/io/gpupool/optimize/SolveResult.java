package io.gpupool.optimize;

import io.gpupool.engine.state.Allocation;

import java.util.Map;
import java.util.OptionalLong;

/**
 * A solver's answer: the allocations (job id -> GPUs, in window order), their score, the best upper bound
 * on the value that the solver knows, whether the value is proven optimal (CP-SAT's proof, or any answer that
 * reaches its bound), whether the time budget cut the search short, and the wall time spent.
 *
 * @param detail a short note on how the answer was found ("order priority-first", "412 generations")
 */
public record SolveResult(String solver, Map<String, Allocation> placement, Score score, OptionalLong bound,
                          boolean optimal, boolean timedOut, double seconds, String detail) {
    public SolveResult {
        placement = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(placement));
    }

    /** (bound - value) / bound, or empty when no bound is known. 0 when proven optimal. */
    public java.util.OptionalDouble gap() {
        if (bound.isEmpty()) return java.util.OptionalDouble.empty();
        long b = bound.getAsLong();
        if (b <= 0) return java.util.OptionalDouble.of(0);
        return java.util.OptionalDouble.of(Math.max(0, (b - score.value()) / (double) b));
    }
}
