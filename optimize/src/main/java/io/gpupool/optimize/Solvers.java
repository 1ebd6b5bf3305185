package io.gpupool.optimize;

import io.gpupool.model.SpecException;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/** Solvers by name. A new solver is one class plus one line here. */
public final class Solvers {
    private static final Map<String, Supplier<Solver>> SOLVERS = new LinkedHashMap<>();

    static {
        SOLVERS.put("greedy", () -> new GreedySolver("greedy", List.of(GreedySolver.Ordering.values())));
        SOLVERS.put("greedy-largest", () -> new GreedySolver("greedy-largest", List.of(GreedySolver.Ordering.LARGEST)));
        SOLVERS.put("greedy-priority", () -> new GreedySolver("greedy-priority", List.of(GreedySolver.Ordering.PRIORITY)));
        SOLVERS.put("greedy-bfd", () -> new GreedySolver("greedy-bfd", List.of(GreedySolver.Ordering.BFD)));
        SOLVERS.put("ga", GeneticSolver::new);
        SOLVERS.put("aco", AntColonySolver::new);
        SOLVERS.put("pso", ParticleSwarmSolver::new);
        SOLVERS.put("cpsat", CpSatSolver::new);
    }

    private Solvers() {}

    public static Solver create(String name) {
        Supplier<Solver> s = SOLVERS.get(name == null ? "" : name.trim().toLowerCase(java.util.Locale.ROOT));
        if (s == null) throw new SpecException("optimize", "solver", "unknown solver '" + name + "'; known: " + String.join(", ", SOLVERS.keySet()));
        return s.get();
    }

    public static List<String> names() {
        return List.copyOf(SOLVERS.keySet());
    }
}
