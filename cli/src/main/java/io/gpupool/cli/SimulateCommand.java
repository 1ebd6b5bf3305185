package io.gpupool.cli;

import io.gpupool.engine.SchedulerConfig;
import io.gpupool.engine.batch.BatchPlacers;
import io.gpupool.engine.placement.PlacementConfig;
import io.gpupool.engine.policy.PolicyRegistry;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.ClusterSpecs;
import io.gpupool.model.GangShape;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.SpecException;
import io.gpupool.sim.Simulator;
import io.gpupool.sim.metrics.ResultFormat;
import io.gpupool.sim.metrics.SimulationResult;
import io.gpupool.sim.trace.GpupoolCsvReader;
import io.gpupool.sim.trace.TraceJob;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/** Replays a trace through the engine under one or more policies and prints the four goals side by side. */
@Command(name = "simulate", 
        description = "Replay a job trace through the scheduler under each policy and compare utilization, waiting, JCT and fairness.")
public final class SimulateCommand implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Option(names = "--trace", required = true, paramLabel = "FILE", description = "Trace file (gpupool CSV).")
    Path trace;

    @Option(names = "--trace-format", defaultValue = "gpupool", paramLabel = "FORMAT",
            description = "Trace format: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE}).", completionCandidates = Formats.class)
    String traceFormat;

    @Option(names = "--cluster", required = true, paramLabel = "SPEC",
            description = "NODESxGPUS:MODEL[,NODESxGPUS:MODEL...], e.g. 64x8:V100-32GB, or a YAML cluster file.")
    String cluster;

    @Option(names = "--policy", defaultValue = "fcfs", split = ",", paramLabel = "NAME",
            description = "Queue policies to compare, comma-separated: fcfs, fcfs-backfill, priority, fair-share, qssf, las, srtf-oracle.")
    List<String> policies;

    @Option(names = "--placement", defaultValue = "binpack,topology", paramLabel = "NAME",
            description = "Node scorers name[:weight],... with optional ;gpu=POLICY;limit=N (default: ${DEFAULT-VALUE}).")
    String placement;

    @Option(names = "--batch", paramLabel = "SOLVER[:OPTIONS]",
            description = "Batch mode: each round, place the head of the queue together with this solver (greedy, ga, aco, pso, cpsat; options window=N,seconds=S,seed=N), then one by one as usual.")
    String batch;

    @Option(names = "--output", defaultValue = "table", paramLabel = "FORMAT", description = "table, json or csv (default: ${DEFAULT-VALUE}).")
    String output;

    static final class Formats extends ArrayList<String> {
        Formats() { super(List.of("gpupool")); }
    }

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        if (!traceFormat.equals("gpupool")) {
            throw new SpecException("--trace-format", "trace-format", "unknown format '" + traceFormat + "'; supported: gpupool");
        }
        if (!List.of("table", "json", "csv").contains(output)) {
            throw new SpecException("--output", "output", "must be table, json or csv, got '" + output + "'");
        }
        if (!Files.isRegularFile(trace)) throw new SpecException("--trace", "trace", "no such file: " + trace);
        for (String p : policies) PolicyRegistry.requireKnown(p);
        PlacementConfig pc = PlacementConfig.parse(placement);
        GpuCatalog catalog = GpuCatalog.standard();
        ClusterSpec cs = ClusterSpecs.parse(cluster, catalog);
        List<TraceJob> jobs = GpupoolCsvReader.read(trace, catalog, Math.max(1, cs.maxGpusPerNode()));
        List<SimulationResult> results = new ArrayList<>();
        for (String p : policies) {
            SchedulerConfig cfg = SchedulerConfig.defaults(p).withPlacement(pc);
            results.add(new Simulator(cs, cfg).batchPlacer(batch == null ? null : BatchPlacers.create(batch)).run(jobs));
        }
        out.print(switch (output) {
            case "json" -> ResultFormat.json(results) + "\n";
            case "csv" -> ResultFormat.csv(results);
            default -> ResultFormat.table(results);
        });
        out.flush();
        return 0;
    }
}
