package io.gpupool.optimize;

import io.gpupool.engine.placement.PlacementConfig;
import io.gpupool.engine.placement.PlacementPipeline;

import java.util.Comparator;
import java.util.List;
import java.util.OptionalLong;
import java.util.stream.IntStream;

/**
 * One pass in a fixed order through the engine's pipeline, for each of its orderings; the best pass wins.
 * <ul>
 *   <li>{@code largest}: largest GPU demand first (the scorers the problem's pipeline is configured with);</li>
 *   <li>{@code priority}: highest priority first, then largest demand;</li>
 *   <li>{@code bfd}: best-fit decreasing: largest demand first, each replica on the node it leaves with the
 *       least free capacity of its kind (the engine's {@code best-fit} scorer over all feasible nodes).</li>
 * </ul>
 * Ties keep window order. Deterministic; no seed, no search.
 */
public final class GreedySolver implements Solver {
    /** A greedy ordering: a comparator over job indices, and whether it packs best-fit over all nodes. */
    public enum Ordering {
        LARGEST("largest", false), PRIORITY("priority", false), BFD("bfd", true);

        final String label;
        final boolean bestFit;

        Ordering(String label, boolean bestFit) {
            this.label = label;
            this.bestFit = bestFit;
        }

        int[] order(BatchProblem p) {
            Comparator<Integer> bySize = Comparator.comparingLong((Integer j) -> -p.job(j).gpuMilliDemand());
            Comparator<Integer> cmp = this == PRIORITY
                    ? Comparator.comparingLong((Integer j) -> -BatchProblem.weightOf(p.job(j).priority())).thenComparing(bySize)
                    : bySize;
            return IntStream.range(0, p.size()).boxed().sorted(cmp.thenComparingInt(j -> j)).mapToInt(Integer::intValue).toArray();
        }

        EngineDecoder decoder(BatchProblem p) {
            return bestFit ? new EngineDecoder(p, new PlacementPipeline(PlacementConfig.parse("best-fit:2,topology;limit=0"))) : new EngineDecoder(p);
        }
    }

    private final String name;
    private final List<Ordering> orderings;

    public GreedySolver(String name, List<Ordering> orderings) {
        this.name = name;
        this.orderings = List.copyOf(orderings);
    }

    @Override public String name() { return name; }

    @Override
    public SolveResult solve(BatchProblem p, SolveSettings s) {
        long t0 = System.nanoTime();
        EngineDecoder.Decoded best = null;
        Ordering winner = null;
        for (Ordering o : orderings) {
            EngineDecoder.Decoded d = o.decoder(p).decode(o.order(p));
            if (best == null || d.score().betterThan(best.score())) {
                best = d;
                winner = o;
            }
        }
        long bound = UpperBound.of(p);
        return new SolveResult(name, best.placement(), best.score(), OptionalLong.of(bound), best.score().value() >= bound, false,
                (System.nanoTime() - t0) / 1e9, "order " + winner.label);
    }
}
