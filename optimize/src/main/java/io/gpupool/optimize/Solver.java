package io.gpupool.optimize;

/**
 * A batch placement method. Every solver answers the same {@link BatchProblem}, returns allocations the
 * engine accepts ({@link EngineCheck}), leaves the cluster as it found it, is deterministic for a seed
 * (up to where its time budget cuts it short), and says when time ran out. A new solver is one class plus
 * one line in {@link Solvers}.
 */
public interface Solver {
    String name();

    SolveResult solve(BatchProblem problem, SolveSettings settings);
}
