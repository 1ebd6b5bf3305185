package io.gpupool.optimize.bench;

import io.gpupool.optimize.BatchProblem;
import io.gpupool.optimize.EngineCheck;
import io.gpupool.optimize.InstanceGenerator;
import io.gpupool.optimize.SolveResult;
import io.gpupool.optimize.SolveSettings;
import io.gpupool.optimize.Solvers;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The optimality-gap benchmark of docs/benchmarks.md: on generated instances ({@link InstanceGenerator}),
 * every solver's gap to CP-SAT's proven optimum (or, where CP-SAT does not prove one, to its best bound, so
 * the gap shown is then an upper bound on the true gap) and its time. Prints a Markdown table.
 *
 * <pre>
 * java -cp cli/target/gpupool.jar io.gpupool.optimize.bench.GapBenchmark [--sizes 20x8,50x16,200x32,1000x128]
 *     [--seeds 5] [--large-seeds SEEDS/2] [--budget 1] [--proof-budget 2] [--reference-budget 30] [--workers 1]
 * </pre>
 * Per instance (seeds 1..{@code --seeds}, or 1..{@code --large-seeds} from 1,000 jobs on): CP-SAT with
 * {@code --reference-budget} seconds (the reference optimum or bound), CP-SAT with {@code --proof-budget}
 * seconds (does it prove optimality, and how fast; 0 skips it), then each heuristic with {@code --budget}
 * seconds and its default iteration count; besides the gap, each solver's gain over {@code greedy} on the
 * same instance. Each instance's values go to stderr. Times are wall clock, with the thread's CPU
 * time beside them (the machine may be shared); the load average is printed before and after.
 */
public final class GapBenchmark {
    private static final List<String> HEURISTICS = List.of("greedy-largest", "greedy-priority", "greedy-bfd", "greedy", "ga", "aco", "pso");

    private record Row(String solver, double gap, double gainOverGreedy, double wall, double cpu, boolean optimal, boolean timedOut) {}

    public static void main(String[] args) throws Exception {
        Map<String, String> opt = new LinkedHashMap<>(Map.of("--sizes", "20x8,50x16,200x32,1000x128", "--seeds", "5", "--budget", "1",
                "--proof-budget", "2", "--reference-budget", "30", "--workers", "1", "--large-seeds", ""));
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (!opt.containsKey(args[i])) throw new IllegalArgumentException("unknown option " + args[i] + "; known: " + opt.keySet());
            opt.put(args[i], args[i + 1]);
        }
        int seeds = Integer.parseInt(opt.get("--seeds"));
        double budget = Double.parseDouble(opt.get("--budget"));
        double proofBudget = Double.parseDouble(opt.get("--proof-budget"));
        double referenceBudget = Double.parseDouble(opt.get("--reference-budget"));
        int workers = Integer.parseInt(opt.get("--workers"));
        ThreadMXBean cpu = ManagementFactory.getThreadMXBean();
        System.out.println("load average before: " + load());
        warmUp();
        StringBuilder md = new StringBuilder();
        md.append("| jobs x nodes | solver | mean gap | max gap | mean gain over greedy | better than greedy | proven optimal | mean time (s) | max time (s) | mean CPU (s) | cut short |\n");
        md.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (String size : opt.get("--sizes").split(",")) {
            String[] jn = size.split("x");
            int jobs = Integer.parseInt(jn[0]), nodes = Integer.parseInt(jn[1]);
            String large = opt.get("--large-seeds");
            int instances = jobs < 1000 ? seeds : large.isEmpty() ? Math.max(1, seeds / 2) : Integer.parseInt(large);
            Map<String, List<Row>> rows = new LinkedHashMap<>();
            for (long seed = 1; seed <= instances; seed++) {
                BatchProblem p = InstanceGenerator.problem(jobs, nodes, seed);
                long greedy = Solvers.create("greedy").solve(p, SolveSettings.of(budget, seed)).score().value();
                String refKey = "cpsat (reference, " + TextNum.of(referenceBudget) + " s)";
                SolveResult ref = run(p, "cpsat", refKey, new SolveSettings(referenceBudget, seed, workers, 0), cpu, null, greedy, rows);
                long reference = ref.optimal() ? ref.score().value() : ref.bound().orElseThrow();
                if (proofBudget > 0) {
                    run(p, "cpsat", "cpsat (" + TextNum.of(proofBudget) + " s)", new SolveSettings(proofBudget, seed, workers, 0), cpu, reference, greedy, rows);
                }
                StringBuilder line = new StringBuilder();
                for (String h : HEURISTICS) {
                    String key = h.startsWith("greedy") ? h : h + " (" + TextNum.of(budget) + " s)";
                    SolveResult r = run(p, h, key, new SolveSettings(budget, seed, 1, 0), cpu, reference, greedy, rows);
                    if (!h.startsWith("greedy-")) line.append(String.format(Locale.ROOT, ", %s %.2f", h, r.score().valueGpus()));
                }
                System.err.printf(Locale.ROOT, "%s seed %d values%s%n", size, seed, line);
                System.err.printf(Locale.ROOT, "%s seed %d: reference %.2f (%s)%n", size, seed, reference / 1000.0, ref.optimal() ? "optimal" : "bound");
            }
            for (Map.Entry<String, List<Row>> e : rows.entrySet()) {
                List<Row> r = e.getValue();
                String name = e.getKey();
                md.append(String.format(Locale.ROOT, "| %s | %s | %.2f%% | %.2f%% | %.2f%% | %d/%d | %d/%d | %.3f | %.3f | %.3f | %d/%d |%n", size, name,
                        100 * r.stream().mapToDouble(Row::gap).average().orElse(0), 100 * r.stream().mapToDouble(Row::gap).max().orElse(0),
                        100 * r.stream().mapToDouble(Row::gainOverGreedy).average().orElse(0),
                        r.stream().filter(x -> x.gainOverGreedy() > 0).count(), r.size(),
                        r.stream().filter(Row::optimal).count(), r.size(), r.stream().mapToDouble(Row::wall).average().orElse(0),
                        r.stream().mapToDouble(Row::wall).max().orElse(0), r.stream().mapToDouble(Row::cpu).average().orElse(0),
                        r.stream().filter(Row::timedOut).count(), r.size()));
            }
        }
        System.out.print(md);
        System.out.println("load average after: " + load());
    }

    private static SolveResult run(BatchProblem p, String solver, String key, SolveSettings s, ThreadMXBean cpu, Long reference, long greedy,
                                   Map<String, List<Row>> rows) {
        long c0 = cpu.getCurrentThreadCpuTime();
        SolveResult r = Solvers.create(solver).solve(p, s);
        double cpuSeconds = (cpu.getCurrentThreadCpuTime() - c0) / 1e9;
        String why = EngineCheck.verify(p, r.placement());
        if (why != null) throw new IllegalStateException(solver + " answer rejected by the engine: " + why);
        long ref = reference != null ? reference : r.optimal() ? r.score().value() : r.bound().orElseThrow();
        double gap = ref <= 0 ? 0 : Math.max(0, (ref - r.score().value()) / (double) ref);
        rows.computeIfAbsent(key, k -> new ArrayList<>()).add(new Row(solver, gap, greedy <= 0 ? 0 : (r.score().value() - greedy) / (double) greedy, r.seconds(), cpuSeconds, r.optimal(), r.timedOut()));
        return r;
    }

    /** JIT and native library warm-up on a throwaway instance, so the first measured solve is not the slowest. */
    private static void warmUp() {
        BatchProblem p = InstanceGenerator.problem(50, 16, 999);
        for (String s : Solvers.names()) Solvers.create(s).solve(p, new SolveSettings(1, 1, 1, 0));
    }

    private static String load() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).trim();
        } catch (Exception e) {
            return "unknown";
        }
    }

    private static final class TextNum {
        static String of(double v) {
            return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
        }
    }
}
