package io.gpupool.cli;

import io.gpupool.engine.Scheduler;
import io.gpupool.engine.SchedulerConfig;
import io.gpupool.engine.SubmitResult;
import io.gpupool.engine.placement.PlacementConfig;
import io.gpupool.engine.state.Allocation;
import io.gpupool.engine.state.GpuGrant;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.ClusterSpecs;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.JobSpec;
import io.gpupool.model.SpecException;
import io.gpupool.optimize.BatchProblem;
import io.gpupool.optimize.SolveResult;
import io.gpupool.optimize.SolveSettings;
import io.gpupool.optimize.Solvers;
import io.gpupool.sim.trace.GpupoolCsvFormat;
import io.gpupool.sim.trace.TraceContext;
import io.gpupool.sim.trace.TraceFile;
import io.gpupool.sim.trace.TraceJob;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;

/**
 * Places a batch of jobs at once on an idle pool with one solver and reports the placement, its objective,
 * the gap to the best known bound and the solve time. Every job of the file is pending at once (submit
 * times and durations are read but not used); jobs that could never run on the pool are listed with the
 * engine's reason and left out.
 */
@Command(name = "optimize",
        description = {"Place a batch of pending jobs together with a solver (greedy, genetic, ant colony, particle swarm, exact CP-SAT)",
                "and report the objective (priority-weighted GPUs placed), the gap to the best bound and the solve time."})
public final class OptimizeCommand implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Option(names = "--cluster", required = true, paramLabel = "SPEC",
            description = "NODESxGPUS:MODEL[,NODESxGPUS:MODEL...], e.g. 4x8:A100-80GB,4x8:T4, or a YAML cluster file.")
    String cluster;

    @Option(names = "--jobs", required = true, paramLabel = "FILE", description = "The batch: a gpupool trace CSV (job_id,submit_time,duration,num_gpus[,gpu_milli,gpu_mem_mib,gpu_type,priority,...]).")
    Path jobsFile;

    @Option(names = "--solver", defaultValue = "cpsat", paramLabel = "NAME",
            description = "greedy, greedy-largest, greedy-priority, greedy-bfd, ga, aco, pso or cpsat (default: ${DEFAULT-VALUE}).")
    String solver;

    @Option(names = "--seconds", defaultValue = "10", paramLabel = "S", description = "Time budget (default: ${DEFAULT-VALUE}); when it runs out the best answer so far is printed, marked as such.")
    double seconds;

    @Option(names = "--seed", defaultValue = "1", paramLabel = "N", description = "Random seed (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--workers", defaultValue = "1", paramLabel = "N", description = "CP-SAT search workers (default: ${DEFAULT-VALUE}; 1 is deterministic).")
    int workers;

    @Option(names = "--iterations", defaultValue = "0", paramLabel = "N", description = "Generations (ga) or iterations (aco, pso); 0 = the solver's default.")
    int iterations;

    @Option(names = "--placement", defaultValue = "binpack,topology", paramLabel = "NAME",
            description = "Node scorers the heuristics place with, as for simulate (default: ${DEFAULT-VALUE}).")
    String placement;

    @Mixin TableOrJson output;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        if (!Files.isRegularFile(jobsFile)) throw new SpecException("--jobs", "jobs", "no such file: " + jobsFile);
        SolveSettings settings = new SolveSettings(seconds, seed, workers, iterations);
        var solverImpl = Solvers.create(solver);
        GpuCatalog catalog = GpuCatalog.standard();
        ClusterSpec cs = ClusterSpecs.parse(cluster, catalog);
        List<TraceJob> read = TraceFile.open(jobsFile, new GpupoolCsvFormat(), new TraceContext(catalog, Math.max(1, cs.maxGpusPerNode())), false).toList();
        if (read.isEmpty()) throw new SpecException(jobsFile.toString(), "jobs", "the file has no jobs");

        // the engine decides what could ever run: a job it rejects on the empty pool is reported, not solved
        Scheduler engine = new Scheduler(cs, SchedulerConfig.defaults("fcfs").withPlacement(PlacementConfig.parse(placement)));
        List<JobSpec> batch = new ArrayList<>();
        Map<String, String> rejected = new LinkedHashMap<>();
        for (TraceJob t : read) {
            SubmitResult r = engine.submit(t.spec(), 0);
            if (r.accepted()) batch.add(t.spec());
            else rejected.put(t.spec().id(), r.reason());
        }
        if (batch.isEmpty()) {
            throw new SpecException(jobsFile.toString(), "jobs", "no job can run on this cluster; first: " + rejected.values().iterator().next());
        }
        BatchProblem problem = new BatchProblem(engine.cluster(), engine.pipeline(), engine.workloadProfile(), batch);
        SolveResult result = solverImpl.solve(problem, settings);
        if (output.json()) Json.print(out, json(problem, result, rejected));
        else out.print(table(problem, result, rejected));
        out.flush();
        return 0;
    }

    private static Map<String, Object> json(BatchProblem p, SolveResult r, Map<String, String> rejected) {
        Map<String, Object> o = new LinkedHashMap<>();
        o.put("solver", r.solver());
        o.put("objective", r.score().valueGpus());
        o.put("bound", r.bound().isPresent() ? r.bound().getAsLong() / 1000.0 : null);
        o.put("gap", r.gap().isPresent() ? r.gap().getAsDouble() : null);
        o.put("optimal", r.optimal());
        o.put("timed_out", r.timedOut());
        o.put("seconds", r.seconds());
        o.put("placed_jobs", r.placement().size());
        o.put("jobs", p.size());
        o.put("placed_gpus", placedGpus(r));
        o.put("opened_gpus", r.score().openedGpus());
        o.put("gang_spread", r.score().gangSpread());
        o.put("detail", r.detail());
        List<Map<String, Object>> placement = new ArrayList<>();
        for (Allocation a : r.placement().values()) {
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("job_id", a.jobId());
            List<Map<String, Object>> reps = new ArrayList<>();
            for (List<GpuGrant> rep : a.replicas()) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("node", p.cluster().node(rep.getFirst().node()).name());
                m.put("gpus", rep.stream().map(GpuGrant::gpu).toList());
                m.put("milli", rep.getFirst().milli());
                reps.add(m);
            }
            e.put("replicas", reps);
            placement.add(e);
        }
        o.put("placement", placement);
        List<String> left = new ArrayList<>();
        for (JobSpec s : p.jobs()) if (!r.placement().containsKey(s.id())) left.add(s.id());
        o.put("not_placed", left);
        o.put("rejected", rejected);
        return o;
    }

    private static double placedGpus(SolveResult r) {
        long m = 0;
        for (Allocation a : r.placement().values()) m += a.gpuMilli();
        return m / 1000.0;
    }

    private static String table(BatchProblem p, SolveResult r, Map<String, String> rejected) {
        StringBuilder sb = new StringBuilder();
        TextTable placed = new TextTable("JOB", "SHAPE", "SHARE", "PRIORITY", "NODE", "GPUS").alignRight(3);
        for (Allocation a : r.placement().values()) {
            JobSpec s = p.job(p.indexOf(a.jobId()));
            Map<String, List<Integer>> byNode = new TreeMap<>();
            for (List<GpuGrant> rep : a.replicas()) {
                for (GpuGrant g : rep) byNode.computeIfAbsent(p.cluster().node(g.node()).name(), k -> new ArrayList<>()).add(g.gpu());
            }
            String share = s.share().isWhole() ? "whole" : s.share().milli() + "m" + (s.share().memoryMib() > 0 ? "/" + s.share().memoryMib() + "MiB" : "");
            boolean first = true;
            for (Map.Entry<String, List<Integer>> e : byNode.entrySet()) {
                placed.row(first ? s.id() : "", first ? s.shape().toString() : "", first ? share : "", first ? s.priority() : "", e.getKey(),
                        String.join(",", e.getValue().stream().map(String::valueOf).toList()));
                first = false;
            }
        }
        sb.append(placed.render()).append('\n');
        List<String> left = new ArrayList<>();
        for (JobSpec s : p.jobs()) if (!r.placement().containsKey(s.id())) left.add(s.id());
        if (!left.isEmpty()) sb.append("not placed (").append(left.size()).append("): ").append(String.join(", ", left)).append("\n\n");
        rejected.forEach((id, why) -> sb.append("cannot run on this cluster: ").append(why).append('\n'));
        if (!rejected.isEmpty()) sb.append('\n');
        sb.append(String.format("solver     %s (%s)%n", r.solver(), r.detail()));
        sb.append(String.format("objective  %s weighted GPUs: %d of %d jobs, %s of %s GPUs asked%n", TextTable.number(round2(r.score().valueGpus())),
                r.placement().size(), p.size(), TextTable.number(round2(placedGpus(r))), TextTable.number(round2(p.demandGpus()))));
        sb.append(String.format("bound      %s%s%n", r.bound().isPresent() ? TextTable.number(round2(r.bound().getAsLong() / 1000.0)) : "unknown",
                r.gap().isPresent() ? String.format("  (gap %.2f%%%s)", 100 * r.gap().getAsDouble(), r.optimal() ? ", proven optimal" : "") : ""));
        sb.append(String.format("penalty    %d idle GPUs opened by shares, %d extra nodes for gangs%n", r.score().openedGpus(), r.score().gangSpread()));
        sb.append(String.format("time       %.3f s%s%n", r.seconds(), r.timedOut() ? " (time budget reached: best answer found so far)" : ""));
        return sb.toString();
    }

    private static double round2(double v) {
        return Math.round(v * 100) / 100.0;
    }
}
