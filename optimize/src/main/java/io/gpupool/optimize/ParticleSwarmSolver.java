package io.gpupool.optimize;

import java.util.Arrays;
import java.util.Comparator;
import java.util.Random;
import java.util.stream.IntStream;

/**
 * Discrete (binary) particle swarm, after Kennedy and Eberhart (1997). A particle is a bit per job: "place
 * this job in the first pass". Its order is the jobs with the bit set, then the rest, each part highest
 * priority first and largest first (the greedy priority order); the order is placed through the engine.
 * Velocities are real, pulled towards the particle's own best and the swarm's best; a bit is set with
 * probability sigmoid(velocity). The swarm starts around the greedy answer (bits = the jobs greedy placed).
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
        search.seeds();
        int n = p.size();
        int iterations = s.iterationsOr(ITERATIONS);
        Random rnd = new Random(s.seed());
        int[] base = GreedySolver.Ordering.PRIORITY.order(p);
        boolean[] greedyPlaced = new boolean[n];
        for (int j = 0; j < n; j++) greedyPlaced[j] = search.best().placed(j);

        boolean[][] x = new boolean[PARTICLES][n];
        double[][] v = new double[PARTICLES][n];
        boolean[][] pbest = new boolean[PARTICLES][];
        Score[] pbestScore = new Score[PARTICLES];
        boolean[] gbest = greedyPlaced.clone();
        Score gbestScore = search.evaluate(order(base, gbest)).score();
        for (int i = 0; i < PARTICLES; i++) {
            for (int j = 0; j < n; j++) {
                // start near the greedy answer: each bit flipped with a small probability
                x[i][j] = i == 0 ? greedyPlaced[j] : greedyPlaced[j] ^ rnd.nextDouble() < 0.1;
                v[i][j] = (rnd.nextDouble() * 2 - 1) * MAX_VELOCITY / 4;
            }
        }
        int done = 0;
        while (done < iterations && !search.outOfTime()) {
            for (int i = 0; i < PARTICLES && !search.outOfTime(); i++) {
                Score sc = search.evaluate(order(base, x[i])).score();
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
                for (int j = 0; j < n; j++) {
                    double xi = x[i][j] ? 1 : 0;
                    v[i][j] = Math.clamp(INERTIA * v[i][j]
                            + COGNITIVE * rnd.nextDouble() * ((pbest[i][j] ? 1 : 0) - xi)
                            + SOCIAL * rnd.nextDouble() * ((gbest[j] ? 1 : 0) - xi), -MAX_VELOCITY, MAX_VELOCITY);
                    x[i][j] = rnd.nextDouble() < 1 / (1 + Math.exp(-v[i][j]));
                }
            }
            done++;
        }
        return search.result(name(), done + " of " + iterations + " iterations x " + PARTICLES + " particles");
    }

    /** The jobs whose bit is set, then the others, each part in the base order. */
    static int[] order(int[] base, boolean[] first) {
        int[] o = new int[base.length];
        int k = 0;
        for (int j : base) if (first[j]) o[k++] = j;
        for (int j : base) if (!first[j]) o[k++] = j;
        return o;
    }
}
