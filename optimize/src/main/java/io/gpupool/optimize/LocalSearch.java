package io.gpupool.optimize;

import java.util.Random;

/**
 * The memetic step the metaheuristics share: a stochastic local search over one candidate (an order and its
 * steering), each neighbour decoded through the engine by an {@link IncrementalDecoder}, so a move costs the
 * placements from the first position it changes on, not a whole pass. Moves:
 * <ul>
 *   <li><b>insert</b>: a job the order leaves out goes to an earlier position (it may now fit, pushing
 *       others out: an ejection);</li>
 *   <li><b>swap</b>: a left-out job trades positions with a placed job before it;</li>
 *   <li><b>demote</b>: a placed job goes to the end (its capacity goes to whoever comes next);</li>
 *   <li><b>steer</b>: a placed job's "least contested model first" flag flips.</li>
 * </ul>
 * Left-out jobs are drawn with odds rising with their priority weight; insert and swap mostly reach back a
 * short way ({@link #reach}). A neighbour at least as good as the current candidate replaces it (sideways
 * moves cross plateaus of equal value); a descent stops after {@code patience} moves without a strict
 * improvement, or at its deadline. Every improvement is offered to the {@link OrderSearch}. Deterministic
 * for a random source unless the deadline stops it.
 */
final class LocalSearch {
    private final BatchProblem p;
    private final OrderSearch search;
    private final Random rnd;
    private final int n;
    private final long maxWeight;

    LocalSearch(BatchProblem p, OrderSearch search, Random rnd) {
        this.p = p;
        this.search = search;
        this.rnd = rnd;
        this.n = p.size();
        long w = 1;
        for (int j = 0; j < n; j++) w = Math.max(w, BatchProblem.weightOf(p.job(j).priority()));
        this.maxWeight = w;
    }

    /** Moves without improvement before giving up, by default: proportional to the window. */
    static int defaultPatience(int n) {
        return 2 * Math.max(50, n);
    }

    /**
     * Iterated local search from {@code start}: a descent (until {@code patience} moves in a row fail to
     * improve), then up to {@code kicks} times a kick (a few random moves applied to the best candidate at once,
     * to leave its basin) followed by another descent; stops early at {@code deadline}. Returns the best
     * candidate reached.
     */
    OrderSearch.Candidate improve(OrderSearch.Candidate start, int patience, int kicks, long deadline) {
        if (n < 2) return start;
        try (IncrementalDecoder decoder = new IncrementalDecoder(p)) {
            Point best = descend(decoder, start.order().clone(), start.steer().clone(), patience, deadline);
            for (int k = 0; k < kicks && !search.outOfTime(deadline); k++) {
                int[] order = best.order.clone();
                boolean[] steer = best.steer.clone();
                int[] pos = best.pos.clone();
                for (int m = 0; m < KICK_MOVES; m++) {
                    propose(order, steer, pos, best.placed);
                    for (int i = 0; i < n; i++) pos[order[i]] = i;
                }
                Point next = descend(decoder, order, steer, patience, deadline);
                if (next.score.compareTo(best.score) >= 0) best = next;
            }
            return new OrderSearch.Candidate(best.order, best.steer);
        }
    }

    /** Moves applied at once by a kick. */
    static final int KICK_MOVES = 4;
    /** Kicks of the local search that ends each metaheuristic (the first one, from greedy, has none). */
    static final int FINAL_KICKS = 8;

    /** A candidate with its decoded outcome: positions, which jobs it places, its score. */
    private record Point(int[] order, boolean[] steer, int[] pos, boolean[] placed, Score score) {}

    /** First-improvement descent with sideways moves; {@code order} and {@code steer} are taken over. */
    private Point descend(IncrementalDecoder decoder, int[] order, boolean[] steer, int patience, long deadline) {
        int[] pos = new int[n];
        boolean[] placed = new boolean[n];
        IncrementalDecoder.Result r = decoder.decode(order, steer);
        search.counted();
        Score current = r.score();
        search.offer(current, r.placement(), new OrderSearch.Candidate(order.clone(), steer.clone()));
        snapshot(r, order, pos, placed);
        int[] trial = new int[n];
        boolean[] trialSteer = new boolean[n];
        int stale = 0;
        while (stale < patience && !search.outOfTime(deadline)) {
            System.arraycopy(order, 0, trial, 0, n);
            System.arraycopy(steer, 0, trialSteer, 0, n);
            stale++;
            if (!propose(trial, trialSteer, pos, placed)) continue;
            IncrementalDecoder.Result t = decoder.decode(trial, trialSteer);
            search.counted();
            if (t.value < current.value()) continue;
            Score s = t.score();
            int c = s.compareTo(current);
            if (c < 0) continue;
            System.arraycopy(trial, 0, order, 0, n);
            System.arraycopy(trialSteer, 0, steer, 0, n);
            snapshot(t, order, pos, placed);
            if (c > 0) {
                stale = 0;
                current = s;
                search.offer(s, t.placement(), new OrderSearch.Candidate(order.clone(), steer.clone()));
            }
        }
        return new Point(order, steer, pos, placed, current);
    }

    private void snapshot(IncrementalDecoder.Result r, int[] order, int[] pos, boolean[] placed) {
        for (int i = 0; i < n; i++) {
            pos[order[i]] = i;
            placed[order[i]] = r.placed(order[i]);
        }
    }

    /** Applies one random move to the trial arrays; false when the drawn move has nothing to act on. */
    private boolean propose(int[] order, boolean[] steer, int[] pos, boolean[] placed) {
        int kind = rnd.nextInt(10);
        if (kind < 4) {                         // insert a left-out job earlier
            int j = pick(placed, false);
            if (j < 0 || pos[j] == 0) return false;
            int to = pos[j] - reach(pos[j]);
            System.arraycopy(order, to, order, to + 1, pos[j] - to);
            order[to] = j;
        } else if (kind < 6) {                  // swap a left-out job with a placed one before it
            int b = pick(placed, false);
            if (b < 0 || pos[b] == 0) return false;
            int at = pos[b] - reach(pos[b]);
            while (at >= 0 && !placed[order[at]]) at--;
            if (at < 0) return false;
            int a = order[at];
            if (p.shapeClass(a) == p.shapeClass(b)) return false;   // the same demand: nothing would change
            order[pos[a]] = b;
            order[pos[b]] = a;
        } else if (kind < 8) {                  // demote a placed job to the end
            int j = pick(placed, true);
            if (j < 0 || pos[j] == n - 1) return false;
            System.arraycopy(order, pos[j] + 1, order, pos[j], n - 1 - pos[j]);
            order[n - 1] = j;
        } else {                                // flip a placed job's steering
            int j = pick(placed, true);
            if (j < 0 || !p.steerable(j)) return false;
            steer[j] = !steer[j];
        }
        return true;
    }

    /**
     * How far back (1..max) a move reaches: mostly a short, geometrically distributed distance (cheap to
     * decode, since only the positions from the change on are placed again), one move in five anywhere.
     */
    private int reach(int max) {
        if (rnd.nextInt(5) == 0) return 1 + rnd.nextInt(max);
        double mean = Math.max(4, n / 10.0);
        int d = 1 + (int) (-Math.log(1 - rnd.nextDouble()) * mean);
        return Math.min(d, max);
    }

    /**
     * A random job that is placed (or left out), or -1 when there is none. A left-out job is drawn with odds
     * rising with its priority weight: leaving out a heavy job costs the most.
     */
    private int pick(boolean[] placed, boolean wantPlaced) {
        int found = -1;
        for (int tries = 0; tries < 4; tries++) {
            int start = rnd.nextInt(n);
            for (int k = 0; k < n; k++) {
                int j = (start + k) % n;
                if (placed[j] != wantPlaced) continue;
                if (wantPlaced || rnd.nextDouble() * maxWeight < BatchProblem.weightOf(p.job(j).priority())) return j;
                found = j;
                break;
            }
            if (found < 0) return -1;
        }
        return found;
    }
}
