package io.gpupool.optimize;

import com.google.ortools.Loader;
import com.google.ortools.sat.CpSolver;
import com.google.ortools.sat.CpSolverStatus;
import com.google.ortools.sat.SatParameters;
import io.gpupool.engine.state.Allocation;

import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * The exact method: {@link CpSatModel} solved by OR-Tools CP-SAT, lexicographically. Phase 1 maximises the
 * value, warm-started from the best greedy answer (the greedy orders, and the priority order with every job
 * steered; it is also what is returned if CP-SAT finds nothing in time), or from the problem's start placement
 * when it has one (a re-pack: its required jobs are forced into every answer). Shares are exact in the model where
 * fill patterns describe them ({@link ShareGroup}); elsewhere every answer's shares are packed exactly per
 * node, and a node that does not pack gets a cut and the model is solved again. Phase 2, with what is left of
 * the budget, keeps the value and minimises the penalty (idle GPUs opened by shares, nodes used by gangs); for
 * a re-pack, phase 1 has half the budget and phase 2 runs from its best answer even when it is not proven.
 * {@code optimal} refers to the value. With one worker the search is deterministic for a seed.
 */
public final class CpSatSolver implements Solver {
    private final int patternLimit;

    public CpSatSolver() {
        this(ShareGroup.PATTERN_LIMIT);
    }

    /** With another limit on fill patterns per GPU class (0: every node's shares by packing cuts; for tests). */
    CpSatSolver(int patternLimit) {
        this.patternLimit = patternLimit;
    }

    @Override public String name() { return "cpsat"; }

    /**
     * One phase's outcome: the best answer found (null if none), whether it is CP-SAT's own answer with every
     * share packed ({@code exact}) and CP-SAT's status for it, and the best bound.
     */
    private record Phase(CpSolverStatus status, Map<String, Allocation> placement, boolean exact, double bound) {}

    @Override
    public SolveResult solve(BatchProblem p, SolveSettings s) {
        long t0 = System.nanoTime();
        long deadline = s.deadlineNanos();
        Loader.loadNativeLibraries();
        SolveResult warm = p.start().isEmpty() ? greedy(p, s)
                : new SolveResult("start", p.start(), Score.of(p, p.start()), OptionalLong.empty(), false, false, 0, "the given start");
        CpSatModel m = new CpSatModel(p, patternLimit);
        m.model.maximize(m.value);
        // a re-pack (required jobs) starts from a feasible answer and gains mostly in phase 2, by packing the shares
        // onto fewer GPUs: it gets half the budget for phase 2 even when phase 1 proves nothing
        boolean repack = !p.start().isEmpty();
        Phase one = run(p, m, s, repack ? t0 + (deadline - t0) / 2 : deadline, warm.placement());
        double phase1 = (System.nanoTime() - t0) / 1e9;
        long bound = UpperBound.of(p);
        if (Double.isFinite(one.bound())) bound = Math.min(bound, (long) Math.floor(one.bound() + 1e-6));
        if (one.placement() == null) {
            // no answer of its own in time; its bound may still prove the warm start optimal
            boolean proven = bound <= warm.score().value();
            return new SolveResult(name(), warm.placement(), warm.score(), OptionalLong.of(Math.max(bound, warm.score().value())),
                    proven, !proven, (System.nanoTime() - t0) / 1e9, (proven ? "greedy answer proven optimal by the CP-SAT bound"
                    : "no CP-SAT answer within the budget; greedy answer") + String.format(" in %.2fs", phase1) + cutNote(m));
        }
        boolean optimal = one.exact() && one.status() == CpSolverStatus.OPTIMAL;
        Map<String, Allocation> placement = one.placement();
        long best = Score.of(p, placement).value();
        String detail = (optimal ? "value proven optimal" : "value not proven optimal (time)") + String.format(" in %.2fs", phase1) + cutNote(m);
        if (optimal || (repack && one.exact())) {
            if (optimal) bound = best;
            if (System.nanoTime() < deadline - 20_000_000L) {
                m.model.addGreaterOrEqual(m.value, best);
                m.model.minimize(m.penalty);
                Phase two = run(p, m, s, deadline, placement);
                if (two.placement() != null && better(p, two.placement(), placement)) placement = two.placement();
                detail += two.exact() && two.status() == CpSolverStatus.OPTIMAL ? "; penalty minimised" : "; penalty not proven minimal (time)";
            }
        }
        Score score = Score.of(p, placement);
        if (warm.score().betterThan(score) || (repack && !better(p, placement, warm.placement()))) {   // a re-pack moves nothing for nothing
            placement = warm.placement();
            score = warm.score();
        }
        boolean proven = optimal || bound <= score.value();   // an answer that reaches the bound is optimal too
        return new SolveResult(name(), placement, score, OptionalLong.of(Math.max(bound, score.value())), proven,
                !proven || System.nanoTime() >= deadline, (System.nanoTime() - t0) / 1e9, detail);
    }

    /**
     * Whether placement a beats b: more value, then (a re-pack that may preempt) fewer start jobs left out, then
     * a lower penalty ({@link Score}).
     */
    private static boolean better(BatchProblem p, Map<String, Allocation> a, Map<String, Allocation> b) {
        Score sa = Score.of(p, a), sb = Score.of(p, b);
        if (sa.value() != sb.value()) return sa.value() > sb.value();
        int la = p.leftOut(a), lb = p.leftOut(b);
        if (la != lb) return la < lb;
        return sa.betterThan(sb);
    }

    /** The warm start when none is given: the best greedy answer (it may leave required jobs out: none are then). */
    private static SolveResult greedy(BatchProblem p, SolveSettings s) {
        OrderSearch start = new OrderSearch(p, s);
        start.seeds();
        return start.result("greedy", "warm start");
    }

    /**
     * Solves, packs, cuts and solves again until an answer packs or time runs out; an answer whose shares do
     * not all pack is salvaged (misfits left out) and kept as the fallback.
     */
    private Phase run(BatchProblem p, CpSatModel m, SolveSettings s, long deadline, Map<String, Allocation> start) {
        double bound = Double.POSITIVE_INFINITY;
        Map<String, Allocation> best = null;
        Map<String, Allocation> hint = start;
        while (true) {
            m.model.clearHints();
            CpSatPlacements.hint(m, hint);
            CpSolver solver = newSolver(s, deadline);
            CpSolverStatus status = solver.solve(m.model);
            if (status == CpSolverStatus.INFEASIBLE || status == CpSolverStatus.MODEL_INVALID) {
                throw new IllegalStateException("CP-SAT model is " + status + " (placing nothing is always feasible): " + m.model.validate());
            }
            // without a solution CP-SAT reports no real bound (0 for a maximisation): trust it only with one
            if (status == CpSolverStatus.UNKNOWN) return new Phase(status, best, false, bound);
            bound = Math.min(bound, solver.bestObjectiveBound());
            CpSatModel.Packing packing = m.pack(solver);
            Map<String, Allocation> answer = EngineCheck.rebuild(name(), p, CpSatPlacements.decode(m, solver, packing));
            if (packing.complete()) return new Phase(status, answer, true, bound);
            if (best == null || Score.of(p, answer).betterThan(Score.of(p, best))) best = answer;
            hint = Score.of(p, best).betterThan(Score.of(p, start)) ? best : start;
            if (System.nanoTime() >= deadline) return new Phase(status, best, false, bound);
        }
    }

    private static String cutNote(CpSatModel m) {
        return m.cuts == 0 ? "" : "; " + m.cuts + " packing cut" + (m.cuts == 1 ? "" : "s");
    }

    private static CpSolver newSolver(SolveSettings s, long deadline) {
        CpSolver solver = new CpSolver();
        SatParameters.Builder params = solver.getParameters();
        double left = Math.max(0.01, (deadline - System.nanoTime()) / 1e9);
        params.setMaxTimeInSeconds(left);
        // also a limit in CP-SAT's deterministic time (about a second of work on a quiet core): where it binds
        // first, the run is reproducible even when it is cut short
        params.setMaxDeterministicTime(s.seconds());
        params.setNumWorkers(s.workers());
        // the full LP relaxation: the fill-pattern columns of the share groups make it tight, and the bound
        // it gives is what proves optimality
        params.setLinearizationLevel(2);
        // no presolve: its symmetry reductions can break the greedy hint (200-job seed 14: the hinted 533.00
        // became a first solution of 509.00), and without it phase 1 proves the 200-job instances faster
        // (seeds 1-20: at most 0.6 s of CPU instead of 2.1 s; see docs/benchmarks.md)
        params.setCpModelPresolve(false);
        params.setRandomSeed((int) (s.seed() ^ (s.seed() >>> 32)));
        params.setLogSearchProgress(false);
        return solver;
    }
}
