package io.gpupool.server.history;

import io.gpupool.engine.config.PoolConfig;
import io.gpupool.engine.policy.PolicyRegistry;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.NodeSpec;
import io.gpupool.model.SpecException;
import io.gpupool.predict.runtime.Predictors;
import io.gpupool.server.core.ServiceException;
import io.gpupool.sim.PolicyRunException;
import io.gpupool.sim.Simulator;
import io.gpupool.sim.history.HistoryComparison;
import io.gpupool.sim.metrics.SimulationResult;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Semaphore;

/**
 * The dashboard's and the API's "what if": the service's own history replayed under other policies on its own nodes,
 * next to the record ({@link HistoryComparison}). Bounded, since it runs inside the service: at most {@link #MAX_JOBS}
 * jobs and {@link #MAX_POLICIES} policies, the policies one after the other on the request's thread (so the engine's
 * loop keeps its processors), at most {@link #BUDGET_MS} of computing, and one comparison at a time.
 */
public final class WhatIf {
    public static final int MAX_JOBS = 20_000;
    public static final int MAX_POLICIES = 10;
    public static final long BUDGET_MS = 30_000;

    /** Thrown from a replay's progress report once the budget is spent: it ends the comparison. */
    private static final class OverBudget extends RuntimeException {
        OverBudget() { super(null, null, false, false); }
    }

    private final Semaphore one = new Semaphore(1);
    private final long budgetMs;

    public WhatIf() {
        this(BUDGET_MS);
    }

    WhatIf(long budgetMs) {
        this.budgetMs = budgetMs;
    }

    /** The policies of a {@code policy=a,b} parameter: known names, each once, at most {@link #MAX_POLICIES}; default the pool's. */
    public static List<String> policies(String param, String poolPolicy) {
        if (param == null || param.isBlank()) return List.of(poolPolicy);
        LinkedHashSet<String> names = new LinkedHashSet<>();
        for (String p : param.split(",")) {
            String name = p.trim();
            if (name.isEmpty()) continue;
            try {
                PolicyRegistry.requireKnown(name);
            } catch (SpecException e) {
                throw ServiceException.invalid("policy", e.rule());
            }
            names.add(name);
        }
        if (names.isEmpty()) return List.of(poolPolicy);
        if (names.size() > MAX_POLICIES) throw ServiceException.invalid("policy", "at most " + MAX_POLICIES + " policies at once, got " + names.size());
        return List.copyOf(names);
    }

    /**
     * The record's row, then one per policy.
     *
     * @param pool the service's configuration with its tenants; its policy is the record's
     */
    public List<SimulationResult> compare(History history, List<NodeSpec> nodes, PoolConfig pool, List<String> policies) {
        if (nodes.isEmpty()) throw ServiceException.invalid("since", "the pool has no nodes to replay the history on");
        if (!one.tryAcquire()) {
            throw new ServiceException(ServiceException.Kind.RATE_LIMITED, null, "another what-if comparison is running; retry when it is done");
        }
        try {
            long deadline = System.nanoTime() + budgetMs * 1_000_000;
            HistoryComparison.Setup setup = new HistoryComparison.Setup(new ClusterSpec(nodes), pool, "recorded (" + pool.policy().name() + ")",
                    "history", Simulator.DEFAULT_FAIRNESS_WINDOW_MS,
                    config -> () -> Predictors.forScheduling(pool.predictorOr("history"), config.defaultRuntimeMs()));
            return HistoryComparison.compare(setup, history.jobs(), policies, 1, (running, fraction) -> {
                if (System.nanoTime() > deadline) throw new OverBudget();
            });
        } catch (PolicyRunException e) {
            if (e.getCause() instanceof OverBudget) {
                throw ServiceException.invalid("since", "replaying " + history.jobs().size() + " jobs under " + policies.size()
                        + " policies takes longer than the service allows (" + budgetMs / 1000 + " s); narrow since and until, or use gpupool simulate --history");
            }
            if (e.getCause() instanceof SpecException s) throw ServiceException.invalid("policy", e.policy() + ": " + s.getMessage());
            throw e;
        } catch (SpecException e) {
            // the record does not fit the pool as it is now (a node gone, fewer GPUs)
            throw ServiceException.invalid("since", "the recorded history does not fit the pool's nodes now: " + e.getMessage());
        } finally {
            one.release();
        }
    }

    /** The answer's rows: each result's report fields (docs/contracts.md, "Simulation output") with its tenants. */
    public static List<Map<String, Object>> rows(List<SimulationResult> results) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (SimulationResult r : results) {
            Map<String, Object> m = new LinkedHashMap<>(r.summary());
            m.put("tenants", r.tenantRows());
            out.add(m);
        }
        return out;
    }
}
