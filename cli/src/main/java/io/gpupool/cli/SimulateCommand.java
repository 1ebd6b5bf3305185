package io.gpupool.cli;

import io.gpupool.engine.SchedulerConfig;
import io.gpupool.engine.batch.BatchPlacers;
import io.gpupool.engine.config.Durations;
import io.gpupool.engine.config.PoolConfig;
import io.gpupool.engine.config.PoolConfigReader;
import io.gpupool.engine.placement.PlacementConfig;
import io.gpupool.engine.policy.PolicyRegistry;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.ClusterSpecs;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.JobSpec;
import io.gpupool.model.SpecException;
import io.gpupool.predict.runtime.Predictors;
import io.gpupool.predict.sizing.AdvisorMemorySizer;
import io.gpupool.sim.PolicyRunException;
import io.gpupool.sim.PolicyRuns;
import io.gpupool.sim.trace.ReservationsFile;
import io.gpupool.sim.Simulator;
import io.gpupool.sim.energy.EnergyModel;
import io.gpupool.sim.energy.PowerDown;
import io.gpupool.sim.history.HistoryComparison;
import io.gpupool.sim.inflation.InflationStudy;
import io.gpupool.sim.inflation.RepackSpec;
import io.gpupool.sim.metrics.ResultFormat;
import io.gpupool.sim.metrics.SimulationResult;
import io.gpupool.sim.report.InflationReport;
import io.gpupool.sim.report.SimulationReport;
import io.gpupool.sim.trace.OpenbFormat;
import io.gpupool.sim.trace.OpenbNodeList;
import io.gpupool.sim.trace.SyntheticTrace;
import io.gpupool.sim.trace.Trace;
import io.gpupool.sim.trace.TraceContext;
import io.gpupool.sim.trace.TraceFile;
import io.gpupool.sim.trace.TraceJob;
import io.gpupool.sim.trace.TraceStats;
import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * Replays a trace through the engine under one or more policies and prints the four goals side by side;
 * or, with {@code --mode inflation}, runs the FGD paper's workload-inflation study per placement.
 */
@Command(name = "simulate",
        description = {"Replay a job trace through the scheduler under each policy and compare utilization, waiting, JCT and fairness;",
                "or (--mode inflation) measure how much of a growing GPU demand each placement can allocate."})
public final class SimulateCommand implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Option(names = "--trace", paramLabel = "FILE", description = "Trace file (format: --trace-format).")
    Path trace;

    @Mixin TraceReading traceReading;

    @Option(names = "--synthetic", paramLabel = "JOBS[,load=L][,tenants=T][,fractional=F]",
            description = "Instead of --trace: a seeded synthetic trace shaped like Helios/Philly (default load 0.9 of the cluster, 6 tenants, 20%% of 1-GPU jobs fractional).")
    String synthetic;

    @Option(names = "--cluster", paramLabel = "SPEC",
            description = "NODESxGPUS:MODEL[,NODESxGPUS:MODEL...], e.g. 64x8:V100-32GB, or a YAML cluster file.")
    String cluster;

    @Option(names = "--nodes", paramLabel = "FILE", description = "The pool from an openb node list (sn,cpu_milli,memory_mib,gpu,model) instead of --cluster.")
    Path nodes;

    @Option(names = "--config", paramLabel = "FILE",
            description = {"Replay: the configuration tree, YAML (docs/configuration.md): policy with its settings, placement, tenants, predictor,",
                    "default run time. --policy, --placement and --predictor override the file's; each policy compared takes the file's",
                    "placement and tenants, and the file's policy settings when it is the file's policy (else its own defaults)."})
    Path config;

    @Option(names = "--policy", split = ",", paramLabel = "NAME",
            completionCandidates = KnownPolicies.class,
            description = "Queue policies to compare, comma-separated: ${COMPLETION-CANDIDATES} (default: the --config file's, else fcfs).")
    List<String> policies;

    /** The registered policies, for the help text and shell completion. */
    static final class KnownPolicies implements Iterable<String> {
        @Override
        public java.util.Iterator<String> iterator() {
            return PolicyRegistry.names().iterator();
        }
    }

    @Option(names = "--placement", paramLabel = "NAME",
            description = {"Replay: node scorers name[:weight],... with optional ;gpu=POLICY;limit=N (default: the --config file's, else binpack,topology).",
                    "Inflation: placements to compare, comma-separated, '+' joining scorers of one (default: fgd,best-fit,binpack)."})
    String placement;

    @Option(names = "--mode", defaultValue = "replay", paramLabel = "MODE",
            description = "replay (default) or inflation (FGD-style workload inflation; --trace-format openb).")
    String mode;

    @Option(names = "--batch", paramLabel = "SOLVER[:OPTIONS]",
            description = "Batch mode: each round, place the head of the queue together with this solver (greedy, ga, aco, pso, cpsat; options window=N,seconds=S,seed=N), then one by one as usual.")
    String batch;

    @Option(names = "--predictor", paramLabel = "NAME",
            description = {"Run-time predictor of qssf and EASY backfill for jobs without an estimate, learning online as jobs finish in the replay:",
                    "history, gbt (gradient-boosted trees), global-median, or none (the default run time). Default: the engine's built-in history median."})
    String predictor;

    @Option(names = "--output", defaultValue = "table", paramLabel = "FORMAT", description = "table, json or csv (default: ${DEFAULT-VALUE}).")
    String output;

    @Option(names = "--report", paramLabel = "DIR", description = "Also write an HTML report with charts (works offline) and SVG charts to DIR.")
    Path report;

    @Option(names = "--seed", defaultValue = "1", paramLabel = "N", description = "Seed of --synthetic and of inflation draws (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--threads", paramLabel = "N",
            description = "Replay: how many policies are replayed at once, each on its own thread (default: the number of policies, "
                    + "at most the number of processors; 1 = one after the other). The output is the same either way.")
    Integer threads;

    @Option(names = "--fairness-window", defaultValue = "1h", paramLabel = "DURATION",
            description = "Window of Jain's fairness index over contended time, e.g. 30m, 1h, 1d (default: ${DEFAULT-VALUE}).")
    String fairnessWindow;

    @Option(names = "--inflation-max", defaultValue = "120", paramLabel = "PCT",
            description = "Inflation: stop when arrived GPU demand reaches PCT %% of the pool (default: ${DEFAULT-VALUE}).")
    double inflationMax;

    @Option(names = "--hold", paramLabel = "N",
            description = "Inflation with --batch: hold arrivals and place them together every N tasks (and at every 1%% point); default: the --batch window.")
    Integer hold;

    @Option(names = "--hold-from", defaultValue = "0", paramLabel = "PCT",
            description = "Inflation with --batch: place each task on arrival (no wait) until PCT %% of the pool's GPUs are allocated, then hold (default: ${DEFAULT-VALUE}).")
    double holdFrom;

    @Option(names = "--repack", paramLabel = "SOLVER:every=N[,gpus=K][,preempt=true][,OPTIONS]",
            description = {"Inflation: a task that does not fit waits, and every N arrivals (while one waits) the running GPU-share tasks are",
                    "placed again with the waiting ones by this batch solver (whole-GPU tasks stay put; a share that changes GPU is a migration),",
                    "only those on the K most stranded shared GPUs with gpus=K, e.g. cpsat:every=200,seconds=5; with preempt=true a re-pack may",
                    "preempt running shares (they wait again) when that allocates more. Reports re-packs, migrations, preemptions and decision time."})
    String repack;

    @Option(names = "--offline", paramLabel = "SOLVER[:OPTIONS]",
            description = "Inflation: also place the tasks arrived by each --offline-at level all at once with this batch solver (the offline answer), e.g. cpsat:window=100000,seconds=180.")
    String offline;

    @Option(names = "--offline-at", defaultValue = "90,95,98,100,110,120", paramLabel = "PCT,...",
            description = "Inflation: the arrived-demand levels of --offline (default: ${DEFAULT-VALUE}).")
    String offlineAt;

    @Option(names = "--energy-util", paramLabel = "U",
            description = {"Replay: the energy model's assumption: a busy GPU draws idle + U x (TDP - idle), a shared GPU its grants' share",
                    "of that, an idle GPU of a powered-on node its idle power (catalog figures; default: ${DEFAULT-VALUE})."},
            defaultValue = "" + EnergyModel.DEFAULT_UTILIZATION)
    double energyUtil;

    @Option(names = "--power-down", paramLabel = "idle=D,wake=D[,keep=N][,off=W]",
            description = {"Replay: power a node off once it has been idle for idle=D (then it draws off=W watts, default 0) and wake",
                    "as few as a queued job needs, each taking work wake=D later; the first keep=N nodes stay on. E.g. idle=30m,wake=5m."})
    String powerDown;

    @Option(names = "--history", paramLabel = "URL|FILE",
            description = {"Instead of --trace: a pool's own history, and the record as the first row ('recorded (POLICY)'). A server's URL",
                    "(its finished jobs of --since..--until, its nodes and configuration; --token, --ca), or a CSV of 'gpupool history export'",
                    "with --pool FILE (or --cluster SPEC and --config FILE on the same node names)."})
    String history;

    @Option(names = "--since", paramLabel = "WHEN", description = "With --history URL: jobs submitted from (30d, 12h, a date, an ISO-8601 instant; default 30 days before --until).")
    String since;

    @Option(names = "--until", paramLabel = "WHEN", description = "With --history URL: jobs submitted before (default: now).")
    String until;

    @Option(names = "--tenant", paramLabel = "NAME", description = "With --history URL: only this tenant's jobs (admin tokens; a member token gets its own).")
    String tenant;

    @Option(names = "--token", paramLabel = "T", description = "With --history URL: API token (default: $GPUPOOL_TOKEN, else token= in ~/.config/gpupool/client.properties).")
    String token;

    @Option(names = "--ca", paramLabel = "FILE", description = "With --history URL: the CA of an https:// server's certificate (default: $GPUPOOL_CA, else the system trust store).")
    Path ca;

    @Option(names = "--pool", paramLabel = "FILE", description = "With --history FILE: the nodes and configuration 'gpupool history export --pool' wrote.")
    Path pool;

    @Option(names = "--ignore-host", description = "Ignore the jobs' host CPU and memory requests (openb) even where the nodes declare host capacity: GPUs alone decide placement.")
    boolean ignoreHost;

    @Option(names = "--reservations", paramLabel = "FILE", description = "Advance reservations made at time 0: a CSV tenant,gpus,model,start,end "
            + "(or nodes=N1|N2 instead of gpus,model; optional name), times in seconds. Inside a window only the tenant's jobs use its GPUs; "
            + "before it only jobs whose time_limit ends before it.")
    Path reservations;

    @Mixin Notes notes;

    @Override
    public Integer call() {
        if (!List.of("table", "json", "csv").contains(output)) {
            throw new SpecException("--output", "output", "must be table, json or csv, got '" + output + "'");
        }
        return switch (mode) {
            case "replay" -> replay();
            case "inflation" -> inflation();
            default -> throw new SpecException("--mode", "mode", "must be replay or inflation, got '" + mode + "'");
        };
    }

    // ---- replay ---------------------------------------------------------------------------------

    private int replay() {
        if (history != null) return historyReplay();
        for (Object o : new Object[] {since, until, tenant, token, ca, pool}) {
            if (o != null) throw new SpecException("--history", "history", "--since, --until, --tenant, --token, --ca and --pool are for --history");
        }
        PoolConfig pool = poolConfig();
        List<String> compared = policies != null ? policies : List.of(pool.policy().name());
        for (String p : compared) PolicyRegistry.requireKnown(p);
        int threadCount = threadCount(compared.size());
        String predictorName = predictor != null ? predictor : pool.predictorOr(null);
        if (predictor != null) Predictors.forScheduling(predictor, 1);   // an unknown name fails before any work
        if (batch != null) BatchPlacers.create(batch);                    // so does a bad --batch (each replay makes its own)
        long windowMs = durationMs(fairnessWindow);
        EnergyModel energy = new EnergyModel(energyUtil);
        PowerDown down = powerDown == null ? null : PowerDown.parse(powerDown);
        ClusterSpec cs = clusterSpec();
        List<ReservationsFile.Entry> reserved = reservations == null ? List.of() : ReservationsFile.read(reservations, GpuCatalog.standard());
        Trace jobs = trace(cs);
        note(jobs.stats());
        // several replays read the same jobs: parse a file trace once (a synthetic one is cheaper to generate again)
        Trace replayed = compared.size() > 1 && jobs instanceof TraceFile && jobs.stats().jobs() <= MAX_LOADED_JOBS
                ? Trace.loaded(jobs) : jobs;
        List<SimulationResult> results;
        try (ProgressBar bar = new ProgressBar(spec.commandLine().getErr(), !notes.quiet)) {
            // each replay owns its simulator, scheduler, predictor, batch placer, recorder and trace cursor
            results = PolicyRuns.run(compared, threadCount, bar::update, (i, progress) -> {
                SchedulerConfig config = pool.withPolicy(compared.get(i)).toSchedulerConfig();
                return new Simulator(cs, config)
                        .fairnessWindowMs(windowMs)
                        .predictor(predictorName == null ? null : () -> Predictors.forScheduling(predictorName, config.defaultRuntimeMs()))
                        .batchPlacer(batch == null ? null : BatchPlacers.create(batch))
                        .energy(energy)
                        .powerDown(down)
                        .progress(progress)
                        .reservations(reserved)
                        .run(replayed);
            });
        } catch (PolicyRunException e) {
            // a user error keeps its exit status (2), now saying under which policy it happened
            if (e.getCause() instanceof SpecException s) {
                throw new SpecException("policy " + e.policy() + (s.where() == null ? "" : ", " + s.where()), s.field(), s.rule());
            }
            throw e;
        }
        Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("skipped_rows", jobs.stats().skippedRows());
        PrintWriter out = spec.commandLine().getOut();
        out.print(switch (output) {
            case "json" -> ResultFormat.json(results, extra) + "\n";
            case "csv" -> ResultFormat.csv(results);
            default -> ResultFormat.table(results);
        });
        out.flush();
        if (report != null) {
            Map<String, String> meta = describe(jobs, cs, pool, predictorName);
            meta.put("energy model", energyNote(cs, energy));
            if (down != null) meta.put("node power-down", down.describe());
            Path index = write(() -> SimulationReport.write(report, results, meta));
            notes.say("report: " + index);
        }
        return 0;
    }

    /**
     * The pool's history, the record first, then each policy's replay of it on the pool's nodes with the pool's
     * configuration (--config and --placement over it, --policy: the pool's policy by default).
     */
    private int historyReplay() {
        if (trace != null || synthetic != null) throw new SpecException("--history", "history", "give --history or --trace/--synthetic, not both");
        if (batch != null) throw new SpecException("--batch", "batch", "is not offered with --history");
        boolean remote = history.startsWith("http://") || history.startsWith("https://");
        HistorySource.Loaded h;
        if (remote) {
            if (cluster != null || nodes != null || pool != null) {
                throw new SpecException("--cluster", "cluster", "--history URL replays on the server's own nodes: leave out --cluster, --nodes and --pool");
            }
            JsonNode r = HistorySource.fetch(new ApiClient(history, token, ca), since, until, tenant);
            notes.say(HistorySource.summary(r));
            h = HistorySource.fromServer(r, history);
        } else {
            if (since != null || until != null || tenant != null) {
                throw new SpecException("--since", "since", "--since, --until and --tenant choose a server's jobs: with --history FILE, export the window you want");
            }
            HistorySource.Pool on;
            if (pool != null) {
                if (cluster != null || nodes != null) throw new SpecException("--pool", "pool", "give --pool or --cluster, not both");
                on = HistorySource.poolFile(pool);
            } else {
                on = new HistorySource.Pool(clusterSpec(), PoolConfig.defaults("fcfs"), null);
            }
            h = HistorySource.fromFile(Path.of(history), on);
        }
        PoolConfig base = config != null ? poolConfig() : placement != null ? h.config().withPlacement(PlacementConfig.parse(placement)) : h.config();
        List<String> compared = policies != null ? policies : List.of(h.policy() != null ? h.policy() : base.policy().name());
        for (String p : compared) PolicyRegistry.requireKnown(p);
        String predictorName = predictor != null ? predictor : base.predictorOr(null);
        if (predictor != null) Predictors.forScheduling(predictor, 1);
        String label = remote ? "history" : Path.of(history).getFileName().toString();
        HistoryComparison.Setup setup = new HistoryComparison.Setup(h.cluster(), base, h.policy() == null ? "recorded" : "recorded (" + h.policy() + ")", label,
                durationMs(fairnessWindow),
                predictorName == null ? null : c -> () -> Predictors.forScheduling(predictorName, c.defaultRuntimeMs()));
        List<SimulationResult> results;
        try (ProgressBar bar = new ProgressBar(spec.commandLine().getErr(), !notes.quiet)) {
            results = HistoryComparison.compare(setup, h.jobs(), compared, threadCount(compared.size()), bar::update);
        } catch (PolicyRunException e) {
            if (e.getCause() instanceof SpecException s) {
                throw new SpecException("policy " + e.policy() + (s.where() == null ? "" : ", " + s.where()), s.field(), s.rule());
            }
            throw e;
        }
        PrintWriter out = spec.commandLine().getOut();
        out.print(switch (output) {
            case "json" -> ResultFormat.json(results, Map.of()) + "\n";
            case "csv" -> ResultFormat.csv(results);
            default -> ResultFormat.table(results);
        });
        out.flush();
        if (report != null) {
            Map<String, String> meta = new LinkedHashMap<>();
            meta.put("history", history + " (" + h.jobs().size() + " finished jobs)");
            meta.put("cluster", h.cluster().nodes().size() + " nodes, " + h.cluster().totalGpus() + " GPUs");
            meta.put("placement", base.placement().shorthand());
            meta.put("fairness window", fairnessWindow);
            Path index = write(() -> SimulationReport.write(report, results, meta));
            notes.say("report: " + index);
        }
        return 0;
    }

    /**
     * The --config file over the defaults (or the defaults), with --placement over it; the policies compared are
     * applied per run ({@link PoolConfig#withPolicy}), --predictor where it is used.
     */
    private PoolConfig poolConfig() {
        PoolConfig pool = PoolConfig.defaults("fcfs");
        if (config != null) {
            if (!Files.isRegularFile(config)) throw new SpecException("--config", "config", "'" + config + "' does not exist or is not a file");
            String text = write(() -> Files.readString(config));
            pool = PoolConfigReader.standard().predictors(Predictors.schedulingNames()).readYaml(text, config.toString(), pool);
        }
        return placement != null ? pool.withPlacement(PlacementConfig.parse(placement)) : pool;
    }

    /** Jobs ask for host CPU and memory where the trace has them and every node declares host capacity, unless --ignore-host. */
    private TraceContext traceContext(ClusterSpec cs) {
        TraceContext pool = TraceContext.forPool(GpuCatalog.standard(), cs);
        return ignoreHost ? pool.withoutHost() : pool;
    }

    private Trace trace(ClusterSpec cs) {
        if ((trace == null) == (synthetic == null)) {
            throw new SpecException("--trace", "trace", "give either --trace FILE or --synthetic JOBS");
        }
        if (synthetic != null) return synthetic(synthetic, cs.totalGpus(), seed);
        TraceContext context = traceContext(cs).withSizer(new AdvisorMemorySizer(GpuCatalog.standard()));
        return traceReading.open(trace, context);
    }

    /** {@code JOBS[,load=L][,tenants=T][,fractional=F]}. */
    static SyntheticTrace synthetic(String text, int poolGpus, long seed) {
        String[] parts = text.split(",");
        double load = 0.9, fractional = 0.2;
        int tenants = 6;
        long jobs;
        try {
            jobs = Long.parseLong(parts[0].trim());
        } catch (NumberFormatException e) {
            throw new SpecException("--synthetic", "jobs", "must be a number of jobs, got '" + parts[0] + "'");
        }
        if (jobs < 1 || jobs > Integer.MAX_VALUE) throw new SpecException("--synthetic", "jobs", "must be in 1.." + Integer.MAX_VALUE + ", got " + jobs);
        for (int i = 1; i < parts.length; i++) {
            String[] kv = parts[i].split("=", 2);
            String key = kv[0].trim();
            if (kv.length != 2) throw new SpecException("--synthetic", key, "expected key=value (load, tenants, fractional)");
            try {
                switch (key) {
                    case "load" -> load = Double.parseDouble(kv[1].trim());
                    case "tenants" -> tenants = Integer.parseInt(kv[1].trim());
                    case "fractional" -> fractional = Double.parseDouble(kv[1].trim());
                    default -> throw new SpecException("--synthetic", key, "unknown parameter; known: load, tenants, fractional");
                }
            } catch (NumberFormatException e) {
                throw new SpecException("--synthetic", key, "must be a number, got '" + kv[1] + "'");
            }
        }
        return new SyntheticTrace(new SyntheticTrace.Params(seed, (int) jobs, load, poolGpus, tenants, fractional));
    }

    private Map<String, String> describe(Trace jobs, ClusterSpec cs, PoolConfig pool, String predictorName) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("trace", jobs.label());
        m.put("jobs in trace", String.format("%,d", jobs.stats().jobs()));
        m.put("cluster", (cluster != null ? cluster : String.valueOf(nodes)) + " (" + cs.nodes().size() + " nodes, " + cs.totalGpus() + " GPUs)");
        if (config != null) m.put("configuration", config.toString());
        m.put("placement", placement != null ? placement : pool.placement().shorthand());
        if (predictorName != null) m.put("run-time predictor", predictorName);
        m.put("fairness window", fairnessWindow);
        if (jobs.stats().skippedRows() > 0) m.put("skipped bad rows", String.valueOf(jobs.stats().skippedRows()));
        return m;
    }

    /** The energy assumption with each model's figures, for the report: "u=0.8; V100-32GB idle 40 W, TDP 300 W, busy 248 W". */
    private static String energyNote(ClusterSpec cs, EnergyModel energy) {
        StringBuilder sb = new StringBuilder("u=" + energy.utilization() + " (busy GPU: idle + u x (TDP - idle)); GPUs only");
        cs.nodes().stream().flatMap(n -> n.gpus().stream()).map(g -> g.model()).distinct().forEach(m ->
                sb.append("; ").append(m.id()).append(" idle ").append(m.idleWatts()).append(" W, TDP ").append(m.tdpWatts())
                        .append(" W, busy ").append(watts(energy.busyWatts(m))).append(" W"));
        return sb.toString();
    }

    private static String watts(double w) {
        return w == Math.rint(w) ? String.valueOf((long) w) : String.format(Locale.ROOT, "%.1f", w);
    }

    /** Above this many jobs a file trace is streamed for each replay instead of held (~230 bytes a job). */
    static final long MAX_LOADED_JOBS = 500_000;

    private int threadCount(int replays) {
        if (threads == null) return Math.max(1, Math.min(replays, Runtime.getRuntime().availableProcessors()));
        if (threads < 1) throw new SpecException("--threads", "threads", "must be at least 1 (1 = one policy after the other), got " + threads);
        return threads;
    }

    // ---- inflation ------------------------------------------------------------------------------

    private int inflation() {
        if (!traceReading.format.equals("openb")) {
            throw new SpecException("--trace-format", "trace-format", "inflation mode draws tasks from an openb pod list: use --trace-format openb");
        }
        if (history != null) throw new SpecException("--history", "history", "is for replay mode: inflation draws tasks from an openb pod list");
        if (trace == null) throw new SpecException("--trace", "trace", "inflation mode needs --trace PODS.csv");
        if (config != null) throw new SpecException("--config", "config", "is for replay mode; inflation compares the placements of --placement");
        if (powerDown != null) throw new SpecException("--power-down", "power-down", "is for replay mode: the inflation study has no time");
        ClusterSpec cs = clusterSpec();
        String list = placement == null ? "fgd,best-fit,binpack" : placement;
        List<String> labels = List.of(list.split(","));
        List<PlacementConfig> configs = labels.stream().map(s -> InflationStudy.placement(s.trim())).toList();
        TraceFile pods = TraceFile.open(trace, OpenbFormat.shapesOnly(), traceContext(cs), traceReading.skipBadRows);
        note(pods.stats());
        List<JobSpec> tasks = new ArrayList<>();
        try (Trace.Cursor c = pods.open()) {
            while (c.hasNext()) tasks.add(c.next().spec());
        }
        if (batch != null) BatchPlacers.create(batch);                     // a bad --batch or --offline fails before any work
        List<Double> levels = offline == null ? List.of() : offlineLevels();
        if (offline != null) BatchPlacers.create(offline);
        if ((hold != null || holdFrom != 0) && batch == null) throw new SpecException("--hold", "hold", "holds arrivals for --batch: give --batch too");
        RepackSpec repacking = repack == null ? null : RepackSpec.parse(repack);   // a bad solver or option fails before any work
        if (repacking != null && batch != null) throw new SpecException("--repack", "repack", "is an alternative to --batch: give one of them");
        InflationStudy study = new InflationStudy(cs, tasks, seed, inflationMax, 1.0);
        List<InflationStudy.Curve> curves = new ArrayList<>();
        List<String> decisions = new ArrayList<>();
        List<InflationStudy.Offline> answers = new ArrayList<>();
        try (ProgressBar bar = new ProgressBar(spec.commandLine().getErr(), !notes.quiet)) {
            for (int i = 0; i < configs.size(); i++) {
                String label = labels.get(i).trim();
                bar.update(label, (double) i / (configs.size() + levels.size()));
                if (repacking != null) {
                    var run = study.runRepack(label + "/repack " + repack, configs.get(i), BatchPlacers.create(repacking.placer()), repacking.every(), repacking.gpus(), repacking.preempt());
                    curves.add(run.curve());
                    var r = run.repacks();
                    decisions.add(String.format(Locale.ROOT, "%s: %,d re-packs, %.3f s per re-pack on average, %.3f s at most; %,d migrations "
                                    + "(%.1f%% of the shares running at a re-pack, %,d at most in one), %,d waiting tasks started, %,d preemptions (%,d at most in one)",
                            label + "/repack " + repack, r.repacks(), r.meanSeconds(), r.maxSeconds(), r.moved(), 100 * r.movedShare(), r.maxMoved(), r.started(),
                            r.preempted(), r.maxPreempted()));
                } else if (batch == null) {
                    curves.add(study.run(label, configs.get(i)));
                } else {
                    var placer = BatchPlacers.create(batch);
                    var run = study.runLookAhead(label + "/" + batch + (holdFrom > 0 ? "@" + fmtPct(holdFrom) : ""), configs.get(i), placer,
                            hold != null ? hold : placer.window(), holdFrom);
                    curves.add(run.curve());
                    var d = run.decisions();
                    decisions.add(String.format(Locale.ROOT, "%s: %,d rounds for %,d tasks, %.3f ms per task, %.3f s per round on average, %.3f s at most",
                            label + "/" + batch + (holdFrom > 0 ? "@" + fmtPct(holdFrom) : ""), d.rounds(), d.tasks(), d.msPerTask(), d.rounds() == 0 ? 0 : d.totalSeconds() / d.rounds(), d.maxRoundSeconds()));
                }
            }
            for (int k = 0; k < levels.size(); k++) {
                bar.update("offline " + levels.get(k) + "%", (double) (configs.size() + k) / (configs.size() + levels.size()));
                answers.add(study.offline(configs.getFirst(), BatchPlacers.create(offline), levels.get(k)));
            }
        }
        PrintWriter out = spec.commandLine().getOut();
        out.print(switch (output) {
            case "json" -> InflationReport.json(curves) + "\n";
            case "csv" -> InflationReport.csv(curves);
            default -> InflationReport.table(curves, 5);
        });
        out.flush();
        // after json or csv the extra lines go to stderr, so that stdout stays one document
        PrintWriter extra = output.equals("table") ? out : spec.commandLine().getErr();
        if (!answers.isEmpty()) extra.print(InflationReport.offlineTable(curves, offline, answers));
        for (String d : decisions) extra.println("decisions " + d);
        extra.flush();
        if (report != null) {
            Map<String, String> meta = new LinkedHashMap<>();
            long cpuOnly = tasks.stream().filter(JobSpec::cpuOnly).count();
            meta.put("tasks", trace + " (" + String.format("%,d", tasks.size() - cpuOnly) + " GPU tasks"
                    + (cpuOnly > 0 ? String.format(" and %,d CPU-only tasks", cpuOnly) : "") + " drawn with replacement, seed " + seed + ")");
            meta.put("cluster", (nodes != null ? nodes.toString() : cluster) + " (" + cs.nodes().size() + " nodes, " + cs.totalGpus() + " GPUs)");
            Path index = write(() -> InflationReport.write(report, curves, meta));
            notes.say("report: " + index);
        }
        return 0;
    }

    private static String fmtPct(double pct) {
        return (pct == Math.rint(pct) ? String.valueOf((long) pct) : String.valueOf(pct)) + "%";
    }

    private List<Double> offlineLevels() {
        List<Double> out = new ArrayList<>();
        for (String item : offlineAt.split(",")) {
            try {
                double v = Double.parseDouble(item.trim());
                if (!(v > 0 && v <= inflationMax)) throw new SpecException("--offline-at", "offline-at", "each level must be in (0, --inflation-max], got " + item.trim());
                out.add(v);
            } catch (NumberFormatException e) {
                throw new SpecException("--offline-at", "offline-at", "must be percentages separated by commas, got '" + item.trim() + "'");
            }
        }
        return out;
    }

    // ---- shared ---------------------------------------------------------------------------------

    private ClusterSpec clusterSpec() {
        if (cluster != null && nodes != null) throw new SpecException("--nodes", "nodes", "give --cluster or --nodes, not both");
        if (nodes != null) return OpenbNodeList.read(nodes, GpuCatalog.standard());
        if (cluster == null) throw new SpecException("--cluster", "cluster", "a pool is needed: --cluster SPEC (or --nodes FILE for an openb node list)");
        return ClusterSpecs.parse(cluster, GpuCatalog.standard());
    }

    private void note(TraceStats s) {
        if (s.skippedRows() > 0) {
            // always said, even with --quiet: results leave these rows out
            spec.commandLine().getErr().println("gpupool: skipped " + s.skippedRows() + " malformed row" + (s.skippedRows() == 1 ? "" : "s")
                    + " (--skip-bad-rows); first: " + String.join("; ", s.firstSkipped()));
        }
        s.ignored().forEach((why, n) -> notes.say("left out " + String.format(Locale.ROOT, "%,d", n) + " row" + (n == 1 ? "" : "s") + ": " + why));
        spec.commandLine().getErr().flush();
    }

    private interface Io<T> { T run() throws IOException; }

    private static <T> T write(Io<T> io) {
        try {
            return io.run();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code 90s}, {@code 30m}, {@code 1h}, {@code 1d} or plain seconds. */
    static long durationMs(String text) {
        return Durations.parseMs(text, "--fairness-window", "duration");
    }
}
