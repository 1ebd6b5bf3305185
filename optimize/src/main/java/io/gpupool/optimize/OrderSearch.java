package io.gpupool.optimize;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

/**
 * The bookkeeping every order-based metaheuristic shares: decode an order through the engine
 * ({@link EngineDecoder}), remember the best answer, count evaluations, watch the time budget, and report.
 * It starts from the greedy orders, so a search never returns worse than greedy.
 */
final class OrderSearch {
    private final BatchProblem p;
    private final EngineDecoder decoder;
    private final long t0 = System.nanoTime();
    private final long deadline;
    private EngineDecoder.Decoded best;
    private int[] bestOrder;
    private long evaluations;
    private boolean timedOut;

    OrderSearch(BatchProblem p, SolveSettings s) {
        this.p = p;
        this.decoder = new EngineDecoder(p);
        this.deadline = s.deadlineNanos();
    }

    /** The greedy orders, each decoded as greedy does (the incumbent to beat), best first. */
    List<int[]> seeds() {
        List<int[]> orders = new ArrayList<>();
        List<Score> scores = new ArrayList<>();
        for (GreedySolver.Ordering o : GreedySolver.Ordering.values()) {
            int[] order = o.order(p);
            EngineDecoder.Decoded d = o.decoder(p).decode(order);
            evaluations++;
            record(d, order);
            orders.add(order);
            scores.add(d.score());
        }
        List<Integer> idx = new ArrayList<>(List.of(0, 1, 2));
        idx.sort((a, b) -> scores.get(b).compareTo(scores.get(a)));
        return idx.stream().map(orders::get).toList();
    }

    EngineDecoder.Decoded evaluate(int[] order) {
        evaluations++;
        EngineDecoder.Decoded d = decoder.decode(order);
        record(d, order);
        return d;
    }

    private void record(EngineDecoder.Decoded d, int[] order) {
        if (best == null || d.score().betterThan(best.score())) {
            best = d;
            bestOrder = order.clone();
        }
    }

    /** True once the budget is spent (and remembers that the search was cut short). */
    boolean outOfTime() {
        if (System.nanoTime() >= deadline) timedOut = true;
        return timedOut;
    }

    EngineDecoder.Decoded best() { return best; }
    int[] bestOrder() { return bestOrder.clone(); }

    SolveResult result(String solver, String detail) {
        long bound = UpperBound.of(p);
        // an answer that reaches the bound is optimal, whoever found it
        return new SolveResult(solver, best.placement(), best.score(), OptionalLong.of(bound), best.score().value() >= bound, timedOut,
                (System.nanoTime() - t0) / 1e9, detail + ", " + evaluations + " placements evaluated" + (timedOut ? "; time budget reached" : ""));
    }
}
