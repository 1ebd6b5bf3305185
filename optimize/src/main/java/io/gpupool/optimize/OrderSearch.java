package io.gpupool.optimize;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalLong;

/**
 * The bookkeeping every order-based metaheuristic shares: decode a candidate (an order of jobs, and which
 * jobs to steer to their least contested GPU model) through the engine ({@link EngineDecoder}), remember the
 * best answer, count evaluations, watch the time budget, and report. It starts from the greedy answers, so a
 * search never returns worse than greedy.
 */
final class OrderSearch {
    /** What the searches vary: the order jobs are placed in, and per job whether it is steered first. */
    record Candidate(int[] order, boolean[] steer) {}

    private final BatchProblem p;
    private final EngineDecoder decoder;
    private final long t0 = System.nanoTime();
    private final long deadline;
    private EngineDecoder.Decoded best;
    private Candidate bestCandidate;
    private long evaluations;
    private boolean timedOut;

    OrderSearch(BatchProblem p, SolveSettings s) {
        this.p = p;
        this.decoder = new EngineDecoder(p);
        this.deadline = s.deadlineNanos();
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
        if (best == null || d.score().betterThan(best.score())) {
            best = d;
            bestCandidate = c;
        }
    }

    /** True once the budget is spent (and remembers that the search was cut short). */
    boolean outOfTime() {
        if (System.nanoTime() >= deadline) timedOut = true;
        return timedOut;
    }

    EngineDecoder.Decoded best() { return best; }
    Candidate bestCandidate() { return bestCandidate; }

    SolveResult result(String solver, String detail) {
        long bound = UpperBound.of(p);
        // an answer that reaches the bound is optimal, whoever found it
        return new SolveResult(solver, best.placement(), best.score(), OptionalLong.of(bound), best.score().value() >= bound, timedOut,
                (System.nanoTime() - t0) / 1e9, detail + ", " + evaluations + " placements evaluated" + (timedOut ? "; time budget reached" : ""));
    }
}
