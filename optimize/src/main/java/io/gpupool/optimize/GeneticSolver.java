package io.gpupool.optimize;

import io.jenetics.EliteSelector;
import io.jenetics.EnumGene;
import io.jenetics.Genotype;
import io.jenetics.PartiallyMatchedCrossover;
import io.jenetics.PermutationChromosome;
import io.jenetics.Phenotype;
import io.jenetics.SwapMutator;
import io.jenetics.TournamentSelector;
import io.jenetics.engine.Engine;
import io.jenetics.engine.EvolutionResult;
import io.jenetics.engine.EvolutionStart;
import io.jenetics.util.ISeq;
import io.jenetics.util.RandomRegistry;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Function;
import java.util.stream.IntStream;

/**
 * Genetic algorithm over job orders, on Jenetics (a maintained GA library: selection, crossover and mutation
 * operators for permutations, elitism, a seeded random source). A chromosome is a permutation of the batch;
 * its fitness is the {@link Score} of placing the jobs in that order through the engine. The population
 * starts from the greedy orders and small swaps of them, plus random orders; partially matched crossover
 * and swap mutation, tournament selection, the two best survive unchanged. Single-threaded, so a seed
 * fixes the run.
 */
public final class GeneticSolver implements Solver {
    static final int POPULATION = 24;
    static final int GENERATIONS = 60;

    @Override public String name() { return "ga"; }

    @Override
    public SolveResult solve(BatchProblem p, SolveSettings s) {
        OrderSearch search = new OrderSearch(p, s);
        List<int[]> seeds = search.seeds();
        int n = p.size();
        if (n < 2) return search.result(name(), "nothing to search");
        int generations = s.iterationsOr(GENERATIONS);
        ISeq<Integer> alleles = ISeq.of(IntStream.range(0, n).boxed().toList());
        Function<Genotype<EnumGene<Integer>>, Score> fitness = gt -> search.evaluate(order(gt)).score();
        Engine<EnumGene<Integer>, Score> engine = Engine.builder(fitness, PermutationChromosome.ofInteger(n))
                .executor(Runnable::run)
                .populationSize(POPULATION)
                .selector(new TournamentSelector<>(3))
                .survivorsSelector(new EliteSelector<EnumGene<Integer>, Score>(2, new TournamentSelector<>(3)))
                .alterers(new PartiallyMatchedCrossover<>(0.7), new SwapMutator<>(Math.min(0.5, 2.0 / n)))
                .maximizing()
                .build();
        long[] done = new long[1];
        RandomRegistry.with(new Random(s.seed()), r -> {
            List<Genotype<EnumGene<Integer>>> start = new ArrayList<>();
            for (int[] o : seeds) start.add(genotype(o, alleles));
            // perturbed copies of the best greedy order: the search starts near it
            for (int k = 0; start.size() < POPULATION / 2; k++) start.add(genotype(swapped(seeds.getFirst(), r, 1 + k % 4), alleles));
            ISeq<Phenotype<EnumGene<Integer>, Score>> population = ISeq.of(start.stream().map(g -> Phenotype.<EnumGene<Integer>, Score>of(g, 1)).toList());
            return engine.stream(() -> EvolutionStart.of(population, 1))
                    .limit(er -> !search.outOfTime())
                    .limit(generations)
                    .peek(er -> done[0] = er.generation())
                    .collect(EvolutionResult.toBestEvolutionResult());
        });
        return search.result(name(), done[0] + " of " + generations + " generations (Jenetics)");
    }

    private static int[] order(Genotype<EnumGene<Integer>> gt) {
        var chromosome = gt.chromosome();
        int[] o = new int[chromosome.length()];
        for (int i = 0; i < o.length; i++) o[i] = chromosome.get(i).allele();
        return o;
    }

    private static Genotype<EnumGene<Integer>> genotype(int[] order, ISeq<Integer> alleles) {
        List<EnumGene<Integer>> genes = new ArrayList<>(order.length);
        for (int j : order) genes.add(EnumGene.of(j, alleles));
        return Genotype.of(new PermutationChromosome<>(ISeq.of(genes)));
    }

    private static int[] swapped(int[] order, java.util.random.RandomGenerator r, int swaps) {
        int[] o = order.clone();
        for (int k = 0; k < swaps; k++) {
            int a = r.nextInt(o.length), b = r.nextInt(o.length);
            int t = o[a];
            o[a] = o[b];
            o[b] = t;
        }
        return o;
    }
}
