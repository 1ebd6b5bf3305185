package io.gpupool.optimize;

import java.util.Random;

/**
 * Discrete (binary) particle swarm, after Kennedy and Eberhart (1997). A particle is two bits per job:
 * "place this job in the first pass" and "steer it first to its least contested GPU model". Its order is
 * the jobs with the first bit set, then the rest, each part in the greedy priority order; the order is
 * placed through the engine. Velocities are real, pulled towards the particle's own best and the swarm's
 * best; a bit is set with probability sigmoid(velocity). Memetic: the best greedy answer is first improved
 * by the shared local search ({@link LocalSearch}); the swarm starts around that answer (first bits = the
 * jobs it placed, second bits = its steering), and the best answer gets a second local search.
 */
public final class ParticleSwarmSolver implements Solver {
    static final int PARTICLES = 16;
    static final int ITERATIONS = 40;
    private static final double INERTIA = 0.7;
    private static final double COGNITIVE = 1.5;
    private static final double SOCIAL = 1.5;
    private static final double MAX_VELOCITY = 4.0;

    @Override public String name() { return "pso"; }

    @Override
    public SolveResult solve(BatchProblem p, SolveSettings s) {
        OrderSearch search = new OrderSearch(p, s);
        Random local = new Random(~s.seed());
        search.improve(search.seeds().getFirst(), local, 0, OrderSearch.FIRST_LOCAL_SEARCH_END);
        int n = p.size();
        int iterations = s.iterationsOr(ITERATIONS);
        Random rnd = new Random(s.seed());
        int[] base = GreedySolver.Ordering.PRIORITY.order(p);
        boolean[] greedyPlaced = new boolean[2 * n];
        for (int j = 0; j < n; j++) {
            greedyPlaced[j] = search.placedInBest(j);
            greedyPlaced[n + j] = search.bestCandidate().steer()[j];
        }

        boolean[][] x = new boolean[PARTICLES][2 * n];
        double[][] v = new double[PARTICLES][2 * n];
        boolean[][] pbest = new boolean[PARTICLES][];
        Score[] pbestScore = new Score[PARTICLES];
        boolean[] gbest = greedyPlaced.clone();
        Score gbestScore = search.evaluate(candidate(base, gbest)).score();
        for (int i = 0; i < PARTICLES; i++) {
            for (int j = 0; j < 2 * n; j++) {
                // start near the greedy answer: each bit flipped with a small probability
                x[i][j] = i == 0 ? greedyPlaced[j] : greedyPlaced[j] ^ rnd.nextDouble() < 0.1;
                v[i][j] = (rnd.nextDouble() * 2 - 1) * MAX_VELOCITY / 4;
            }
        }
        int done = 0;
        long swarmEnd = search.until(OrderSearch.POPULATION_PHASE_END);
        while (done < iterations && !search.outOfTime(swarmEnd)) {
            for (int i = 0; i < PARTICLES && !search.outOfTime(swarmEnd); i++) {
                Score sc = search.evaluate(candidate(base, x[i])).score();
                if (pbest[i] == null || sc.betterThan(pbestScore[i])) {
                    pbest[i] = x[i].clone();
                    pbestScore[i] = sc;
                }
                if (sc.betterThan(gbestScore)) {
                    gbest = x[i].clone();
                    gbestScore = sc;
                }
            }
            for (int i = 0; i < PARTICLES; i++) {
                if (pbest[i] == null) continue;
                for (int j = 0; j < 2 * n; j++) {
                    double xi = x[i][j] ? 1 : 0;
                    v[i][j] = Math.clamp(INERTIA * v[i][j]
                            + COGNITIVE * rnd.nextDouble() * ((pbest[i][j] ? 1 : 0) - xi)
                            + SOCIAL * rnd.nextDouble() * ((gbest[j] ? 1 : 0) - xi), -MAX_VELOCITY, MAX_VELOCITY);
                    x[i][j] = rnd.nextDouble() < 1 / (1 + Math.exp(-v[i][j]));
                }
            }
            done++;
        }
        search.improve(search.bestCandidate(), local, LocalSearch.FINAL_KICKS, OrderSearch.FINAL_LOCAL_SEARCH_END);
        return search.result(name(), done + " of " + iterations + " iterations x " + PARTICLES + " particles between two local searches");
    }

    /** The jobs whose first bit is set, then the others, each part in the base order; steering from the second bits. */
    static OrderSearch.Candidate candidate(int[] base, boolean[] bits) {
        int n = base.length;
        int[] o = new int[n];
        int k = 0;
        for (int j : base) if (bits[j]) o[k++] = j;
        for (int j : base) if (!bits[j]) o[k++] = j;
        return new OrderSearch.Candidate(o, java.util.Arrays.copyOfRange(bits, n, 2 * n));
    }
}
