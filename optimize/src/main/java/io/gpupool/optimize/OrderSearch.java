package io.gpupool.optimize;

import io.gpupool.engine.state.Allocation;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Random;

/**
 * The bookkeeping every order-based metaheuristic shares: decode a candidate (an order of jobs, and which
 * jobs to steer to their least contested GPU model) through the engine ({@link EngineDecoder}), remember the
 * best answer, count evaluations, watch the time budget (and the shares of it that a search gives its
 * phases), run the shared local search ({@link LocalSearch}), and report. It starts from the greedy answers,
 * so a search never returns worse than greedy.
 */
final class OrderSearch {
    /**
     * Shares of the time budget by which the phases of a memetic search end: the local search from the best
     * greedy answer, then the population (generations, ants, particles), then the final local search.
     */
    static final double FIRST_LOCAL_SEARCH_END = 0.3;
    static final double POPULATION_PHASE_END = 0.6;
    /**
     * The final local search ends by this share: the deadline is checked between placement passes (tens of
     * milliseconds each at 2,000 jobs on a busy core), and the report is built after it, so the rest is the
     * margin that keeps the whole run within the budget.
     */
    static final double FINAL_LOCAL_SEARCH_END = 0.98;

    /** What the searches vary: the order jobs are placed in, and per job whether it is steered first. */
    record Candidate(int[] order, boolean[] steer) {}

    private final BatchProblem p;
    private final EngineDecoder decoder;
    private final long t0 = System.nanoTime();
    private final long deadline;
    private Score bestScore;
    private Map<String, Allocation> bestPlacement;
    private final boolean[] bestPlaced;
    private Candidate bestCandidate;
    private long evaluations;
    private boolean timedOut;

    OrderSearch(BatchProblem p, SolveSettings s) {
        this.p = p;
        this.decoder = new EngineDecoder(p);
        this.deadline = s.deadlineNanos();
        this.bestPlaced = new boolean[p.size()];
    }

    /**
     * The starting points, best first: each greedy order decoded as greedy does (the incumbent to beat), and
     * the priority order with every job steered.
     */
    List<Candidate> seeds() {
        List<Candidate> seeds = new ArrayList<>();
        List<Score> scores = new ArrayList<>();
        boolean[] none = new boolean[p.size()];
        for (GreedySolver.Ordering o : GreedySolver.Ordering.values()) {
            Candidate c = new Candidate(o.order(p), none);
            EngineDecoder.Decoded d = o.decoder(p).decode(c.order());
            evaluations++;
            record(d, c);
            seeds.add(c);
            scores.add(d.score());
        }
        boolean[] all = new boolean[p.size()];
        Arrays.fill(all, true);
        Candidate steered = new Candidate(GreedySolver.Ordering.PRIORITY.order(p), all);
        seeds.add(steered);
        scores.add(evaluate(steered).score());
        List<Integer> idx = new ArrayList<>();
        for (int i = 0; i < seeds.size(); i++) idx.add(i);
        idx.sort((a, b) -> scores.get(b).compareTo(scores.get(a)));
        return idx.stream().map(seeds::get).toList();
    }

    EngineDecoder.Decoded evaluate(Candidate c) {
        evaluations++;
        EngineDecoder.Decoded d = decoder.decode(c.order(), c.steer());
        record(d, c);
        return d;
    }

    private void record(EngineDecoder.Decoded d, Candidate c) {
        if (bestScore == null || d.score().betterThan(bestScore)) offer(d.score(), d.placement(), c);
    }

    /** An answer found elsewhere (the local search): kept when it beats the best so far. */
    void offer(Score score, Map<String, Allocation> placement, Candidate c) {
        if (bestScore != null && !score.betterThan(bestScore)) return;
        bestScore = score;
        bestPlacement = placement;
        bestCandidate = c;
        for (int j = 0; j < bestPlaced.length; j++) bestPlaced[j] = placement.containsKey(p.job(j).id());
    }

    /** One placement pass done outside {@link #evaluate} (for the count in the report). */
    void counted() {
        evaluations++;
    }

    /**
     * Local search from {@code c} (see {@link LocalSearch}) with the default patience and {@code kicks}
     * restarts, until at most {@code share} of the whole budget has passed since the start; returns the best
     * candidate it reached.
     */
    Candidate improve(Candidate c, Random rnd, int kicks, double share) {
        return new LocalSearch(p, this, rnd).improve(c, LocalSearch.defaultPatience(p.size()), kicks, until(share));
    }

    /** The moment {@code share} (0..1) of the budget has passed since the search began. */
    long until(double share) {
        return t0 + (long) ((deadline - t0) * share);
    }

    /** True once the budget is spent (and remembers that the search was cut short). */
    boolean outOfTime() {
        return outOfTime(deadline);
    }

    /** True once this phase's deadline (at most the budget's) is reached; remembers that the search was cut short. */
    boolean outOfTime(long phaseDeadline) {
        boolean out = System.nanoTime() >= Math.min(phaseDeadline, deadline);
        if (out) timedOut = true;
        return out;
    }

    Score bestScore() { return bestScore; }
    /** Whether the best answer so far places job j. */
    boolean placedInBest(int j) { return bestPlaced[j]; }
    Candidate bestCandidate() { return bestCandidate; }

    SolveResult result(String solver, String detail) {
        long bound = UpperBound.of(p);
        // an answer that reaches the bound is optimal, whoever found it
        return new SolveResult(solver, bestPlacement, bestScore, OptionalLong.of(bound), bestScore.value() >= bound, timedOut,
                (System.nanoTime() - t0) / 1e9, detail + ", " + evaluations + " placements evaluated" + (timedOut ? "; time budget reached" : ""));
    }
}
