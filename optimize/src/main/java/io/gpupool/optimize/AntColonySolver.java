package io.gpupool.optimize;

import java.util.Random;

/**
 * Ant colony optimisation (MAX-MIN ant system) over job orders. Each ant builds an order by drawing the next
 * job with probability proportional to pheromone^alpha x heuristic^beta, where the heuristic is the job's
 * priority weight (its value per GPU); the order is placed through the engine. Pheromone sits on jobs
 * ("worth placing early"), as in ant algorithms for knapsack problems: it evaporates each iteration, and the
 * jobs the iteration's best and the overall best ant placed get more, within MAX-MIN bounds. Each ant also
 * decides per job whether to steer it first to its least contested GPU model, with a learned probability
 * that moves towards the best ants' choices. Memetic: the best greedy answer, improved by the shared local
 * search ({@link LocalSearch}), seeds both and is the incumbent; the colony's best gets a second local search.
 */
public final class AntColonySolver implements Solver {
    static final int ANTS = 10;
    static final int ITERATIONS = 40;
    private static final double ALPHA = 1.0;
    private static final double BETA = 2.0;
    private static final double EVAPORATION = 0.15;

    @Override public String name() { return "aco"; }

    @Override
    public SolveResult solve(BatchProblem p, SolveSettings s) {
        OrderSearch search = new OrderSearch(p, s);
        Random local = new Random(~s.seed());
        search.improve(search.seeds().getFirst(), local, 0, OrderSearch.FIRST_LOCAL_SEARCH_END);
        double[] steerP = new double[p.size()];
        for (int j = 0; j < steerP.length; j++) steerP[j] = search.bestCandidate().steer()[j] ? 0.8 : 0.2;
        int n = p.size();
        int iterations = s.iterationsOr(ITERATIONS);
        Random rnd = new Random(s.seed());
        double tauMax = 1.0;
        double tauMin = tauMax / (2.0 * Math.max(1, n));
        double[] tau = new double[n];
        double[] eta = new double[n];
        for (int j = 0; j < n; j++) {
            tau[j] = search.placedInBest(j) ? tauMax : tauMax / 2;
            eta[j] = Math.pow(BatchProblem.weightOf(p.job(j).priority()), BETA);
        }
        int done = 0;
        double[] w = new double[n];
        long colonyEnd = search.until(OrderSearch.POPULATION_PHASE_END);
        while (done < iterations && !search.outOfTime(colonyEnd)) {
            EngineDecoder.Decoded iterationBest = null;
            boolean[] iterationSteer = null;
            for (int a = 0; a < ANTS && !search.outOfTime(colonyEnd); a++) {
                boolean[] steer = new boolean[n];
                for (int j = 0; j < n; j++) steer[j] = rnd.nextDouble() < steerP[j];
                OrderSearch.Candidate c = new OrderSearch.Candidate(construct(tau, eta, w, rnd), steer);
                EngineDecoder.Decoded d = search.evaluate(c);
                if (iterationBest == null || d.score().betterThan(iterationBest.score())) {
                    iterationBest = d;
                    iterationSteer = steer;
                }
            }
            if (iterationBest == null) break;
            for (int j = 0; j < n; j++) {
                tau[j] *= 1 - EVAPORATION;
                if (iterationBest.placed(j)) tau[j] += EVAPORATION * tauMax / 2;
                if (search.placedInBest(j)) tau[j] += EVAPORATION * tauMax / 2;
                tau[j] = Math.clamp(tau[j], tauMin, tauMax);
                double target = (iterationSteer[j] ? 0.5 : 0) + (search.bestCandidate().steer()[j] ? 0.5 : 0);
                steerP[j] = Math.clamp((1 - EVAPORATION) * steerP[j] + EVAPORATION * target, 0.05, 0.95);
            }
            done++;
        }
        search.improve(search.bestCandidate(), local, LocalSearch.FINAL_KICKS, OrderSearch.FINAL_LOCAL_SEARCH_END);
        return search.result(name(), done + " of " + iterations + " iterations x " + ANTS + " ants between two local searches");
    }

    /** One ant's order: roulette-wheel draws without replacement. */
    private static int[] construct(double[] tau, double[] eta, double[] w, Random rnd) {
        int n = tau.length;
        double total = 0;
        for (int j = 0; j < n; j++) total += w[j] = Math.pow(tau[j], ALPHA) * eta[j];
        int[] order = new int[n];
        for (int k = 0; k < n; k++) {
            double x = rnd.nextDouble() * total;
            int pick = -1;
            for (int j = 0; j < n; j++) {
                if (w[j] <= 0) continue;
                pick = j;
                if ((x -= w[j]) <= 0) break;
            }
            order[k] = pick;
            total -= w[pick];
            w[pick] = 0;
        }
        return order;
    }
}
