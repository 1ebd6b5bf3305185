package io.gpupool.optimize;

import io.gpupool.model.SpecException;

/**
 * How long and how a solver runs.
 *
 * @param seconds    time budget; a solver that reaches it returns the best feasible answer so far and says so
 * @param seed       random seed: with the same seed and problem, a run that is not cut short by the budget
 *                   gives the same answer
 * @param workers    CP-SAT search workers (1 = deterministic); the other solvers are single-threaded
 * @param iterations generations (GA), ant iterations (ACO) or swarm iterations (PSO); 0 = the solver's default
 */
public record SolveSettings(double seconds, long seed, int workers, int iterations) {
    public SolveSettings {
        if (!(seconds > 0) || seconds > 86_400) throw new SpecException("optimize", "seconds", "must be in (0, 86400], got " + seconds);
        if (workers < 1 || workers > 64) throw new SpecException("optimize", "workers", "must be in 1..64, got " + workers);
        if (iterations < 0) throw new SpecException("optimize", "iterations", "must be >= 0, got " + iterations);
    }

    public static SolveSettings of(double seconds, long seed) {
        return new SolveSettings(seconds, seed, 1, 0);
    }

    public SolveSettings withIterations(int n) {
        return new SolveSettings(seconds, seed, workers, n);
    }

    /** System.nanoTime() at which the budget ends, counted from now. */
    long deadlineNanos() {
        return System.nanoTime() + (long) (seconds * 1e9);
    }

    int iterationsOr(int dflt) {
        return iterations > 0 ? iterations : dflt;
    }
}
