package io.gpupool.optimize;

import io.gpupool.engine.batch.BatchPlacer;
import io.gpupool.engine.state.Allocation;

import java.util.Map;
import java.util.OptionalLong;

/** Batch mode with one of the solvers: each round, the head of the queue is solved as one batch. */
public final class SolverBatchPlacer implements BatchPlacer {
    private final Solver solver;
    private final int window;
    private final SolveSettings settings;
    private OptionalLong lastBound = OptionalLong.empty();

    public SolverBatchPlacer(Solver solver, int window, SolveSettings settings) {
        this.solver = solver;
        this.window = window;
        this.settings = settings;
    }

    @Override public String name() { return solver.name(); }

    @Override public int window() { return window; }

    @Override
    public Map<String, Allocation> plan(Batch batch) {
        BatchProblem p = BatchProblem.of(batch);
        SolveResult r = solver.solve(p, settings);
        lastBound = r.bound();
        // a re-pack never ends worse than it started, and moves nothing for nothing: an answer that leaves a
        // required job out, or does no better than the start, or preempts (leaves a start job out) for less than
        // more value, gives the start back
        if (!batch.start().isEmpty() && (!r.placement().keySet().containsAll(batch.required()) || !r.score().betterThan(Score.of(p, batch.start()))
                || (p.leftOut(r.placement()) > 0 && r.score().value() <= Score.of(p, batch.start()).value()))) {
            return batch.start();
        }
        return r.placement();
    }

    @Override public OptionalLong lastBound() { return lastBound; }
}
