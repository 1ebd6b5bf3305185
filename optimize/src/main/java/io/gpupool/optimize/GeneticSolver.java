package io.gpupool.optimize;

import io.jenetics.DoubleChromosome;
import io.jenetics.DoubleGene;
import io.jenetics.EliteSelector;
import io.jenetics.GaussianMutator;
import io.jenetics.Genotype;
import io.jenetics.Phenotype;
import io.jenetics.TournamentSelector;
import io.jenetics.UniformCrossover;
import io.jenetics.engine.Engine;
import io.jenetics.engine.EvolutionResult;
import io.jenetics.engine.EvolutionStart;
import io.jenetics.util.ISeq;
import io.jenetics.util.RandomRegistry;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.function.Function;
import java.util.stream.IntStream;

/**
 * Genetic algorithm on Jenetics (a maintained GA library: selection, crossover and mutation operators,
 * elitism, a seeded random source), with a random-key encoding (Bean, 1994): a chromosome of 2n numbers in
 * [0, 1); the first n sorted give the order in which jobs are placed, the second n say which jobs are first
 * steered to their least contested GPU model (key >= 0.5). Fitness is the {@link Score} of placing that
 * order through the engine. Memetic: the best greedy answer is first improved by the shared local search
 * ({@link LocalSearch}); the population starts from that, the greedy answers, small perturbations of the
 * improved one, and random keys; uniform crossover, Gaussian mutation of a few keys, tournament selection,
 * the two best survive unchanged; the best individual then gets a second local search. Single-threaded, so
 * a seed fixes the run (unless the time budget cuts a phase short).
 */
public final class GeneticSolver implements Solver {
    static final int POPULATION = 24;
    static final int GENERATIONS = 60;

    @Override public String name() { return "ga"; }

    @Override
    public SolveResult solve(BatchProblem p, SolveSettings s) {
        OrderSearch search = new OrderSearch(p, s);
        List<OrderSearch.Candidate> seeds = search.seeds();
        int n = p.size();
        if (n < 2) return search.result(name(), "nothing to search");
        int generations = s.iterationsOr(GENERATIONS);
        long generationsEnd = search.until(OrderSearch.POPULATION_PHASE_END);
        // past the phase's end the rest of a generation is not placed (it scores nothing), so a generation of
        // slow passes cannot overrun the budget
        Function<Genotype<DoubleGene>, Score> fitness = gt -> search.outOfTime(generationsEnd) ? Score.EMPTY : search.evaluate(decode(gt, n)).score();
        Engine<DoubleGene, Score> engine = Engine.builder(fitness, DoubleChromosome.of(0, 1, 2 * n))
                .executor(Runnable::run)
                .populationSize(POPULATION)
                .selector(new TournamentSelector<>(3))
                .survivorsSelector(new EliteSelector<DoubleGene, Score>(2, new TournamentSelector<>(3)))
                .alterers(new UniformCrossover<>(0.6, 0.2), new GaussianMutator<>(Math.min(0.5, 4.0 / n)))
                .maximizing()
                .build();
        long[] done = new long[1];
        Random local = new Random(~s.seed());
        OrderSearch.Candidate improved = search.improve(seeds.getFirst(), local, 0, OrderSearch.FIRST_LOCAL_SEARCH_END);
        RandomRegistry.with(new Random(s.seed()), r -> {
            List<Genotype<DoubleGene>> start = new ArrayList<>();
            start.add(encode(improved));
            for (OrderSearch.Candidate c : seeds) start.add(encode(c));
            // perturbed copies of the locally improved start: the search begins near it
            double[] bestKeys = keys(improved);
            while (start.size() < POPULATION / 2) {
                double[] k = bestKeys.clone();
                for (int i = 0; i < 1 + start.size() % 4; i++) k[r.nextInt(k.length)] = r.nextDouble();
                start.add(genotype(k));
            }
            ISeq<Phenotype<DoubleGene, Score>> population = ISeq.of(start.stream().map(g -> Phenotype.<DoubleGene, Score>of(g, 1)).toList());
            return engine.stream(() -> EvolutionStart.of(population, 1))
                    .limit(er -> !search.outOfTime(generationsEnd))
                    .limit(generations)
                    .peek(er -> done[0] = er.generation())
                    .collect(EvolutionResult.toBestEvolutionResult());
        });
        search.improve(search.bestCandidate(), local, LocalSearch.FINAL_KICKS, OrderSearch.FINAL_LOCAL_SEARCH_END);
        return search.result(name(), done[0] + " of " + generations + " generations (Jenetics, random keys) between two local searches");
    }

    /** Keys to candidate: order by the first n keys (ties by index), steer where the second n keys are >= 0.5. */
    static OrderSearch.Candidate decode(Genotype<DoubleGene> gt, int n) {
        var ch = gt.chromosome();
        double[] k = new double[2 * n];
        for (int i = 0; i < k.length; i++) k[i] = ch.get(i).doubleValue();
        int[] order = IntStream.range(0, n).boxed().sorted(Comparator.comparingDouble((Integer j) -> k[j]).thenComparingInt(j -> j))
                .mapToInt(Integer::intValue).toArray();
        boolean[] steer = new boolean[n];
        for (int j = 0; j < n; j++) steer[j] = k[n + j] >= 0.5;
        return new OrderSearch.Candidate(order, steer);
    }

    /** Candidate to keys: a job's position spread over [0, 1), its steer flag as 0.25 or 0.75. */
    static double[] keys(OrderSearch.Candidate c) {
        int n = c.order().length;
        double[] k = new double[2 * n];
        for (int pos = 0; pos < n; pos++) k[c.order()[pos]] = (pos + 0.5) / n;
        for (int j = 0; j < n; j++) k[n + j] = c.steer()[j] ? 0.75 : 0.25;
        return k;
    }

    private static Genotype<DoubleGene> encode(OrderSearch.Candidate c) {
        return genotype(keys(c));
    }

    private static Genotype<DoubleGene> genotype(double[] keys) {
        return Genotype.of(DoubleChromosome.of(Arrays.stream(keys).mapToObj(v -> DoubleGene.of(v, 0, 1)).toList()));
    }
}
