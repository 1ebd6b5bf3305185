package io.gpupool.optimize;

import io.gpupool.engine.batch.BatchPlacer;
import io.gpupool.engine.placement.CycleState;
import io.gpupool.engine.placement.PlacementPipeline;
import io.gpupool.engine.placement.ReplicaDemand;
import io.gpupool.engine.placement.WorkloadProfile;
import io.gpupool.engine.state.ClusterState;
import io.gpupool.model.JobSpec;
import io.gpupool.model.SpecException;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * One batch placement instance, the same for every solver: the cluster as it is now (the engine's
 * {@link ClusterState}: free whole GPUs, free compute and memory per GPU, models, NVLink domains), the
 * engine's placement pipeline (whose filters and GPU rules are the constraints) and a window of pending jobs.
 *
 * <p>Objective, lexicographic: (1) maximise the priority-weighted GPU demand placed,
 * {@code sum weight(priority) x demand in thousandths of a GPU}, with {@link #weightOf}; then (2) minimise
 * fragmentation and gang spread ({@link Score}). Solvers never change the cluster: they work inside
 * checkpoints and roll back.
 */
public final class BatchProblem {
    /** Priorities above this weigh the same (keeps objective coefficients bounded). */
    public static final int MAX_PRIORITY = 1000;

    private final ClusterState cluster;
    private final PlacementPipeline pipeline;
    private final WorkloadProfile profile;
    private final List<JobSpec> jobs;
    private final long[] values;
    private final int[] shapeClass;
    private final int shapeClasses;
    private final Map<String, Integer> indexById = new HashMap<>();
    private final JobSpec[] steered;
    private final boolean[] required;
    private final Map<String, io.gpupool.engine.state.Allocation> start;

    public BatchProblem(ClusterState cluster, PlacementPipeline pipeline, WorkloadProfile profile, List<JobSpec> jobs) {
        this(cluster, pipeline, profile, jobs, Set.of(), Map.of());
    }

    /**
     * A re-pack's problem: the jobs in {@code required} must all be placed, and {@code start} places them (and
     * perhaps others) as they ran, a feasible answer to start from ({@link BatchPlacer.Batch}).
     */
    public BatchProblem(ClusterState cluster, PlacementPipeline pipeline, WorkloadProfile profile, List<JobSpec> jobs,
                        Set<String> required, Map<String, io.gpupool.engine.state.Allocation> start) {
        this.cluster = cluster;
        this.pipeline = pipeline;
        this.profile = profile;
        this.jobs = List.copyOf(jobs);
        int n = this.jobs.size();
        values = new long[n];
        shapeClass = new int[n];
        Map<String, Integer> classes = new HashMap<>();
        for (int j = 0; j < n; j++) {
            JobSpec s = this.jobs.get(j);
            if (indexById.put(s.id(), j) != null) throw new SpecException("job " + s.id(), "job_id", "appears twice in the batch");
            values[j] = weightOf(s.priority()) * s.gpuMilliDemand();
            shapeClass[j] = classes.computeIfAbsent(shapeKey(s), k -> classes.size());
        }
        shapeClasses = classes.size();
        steered = steer(cluster, this.jobs);
        this.required = new boolean[n];
        for (String id : required) {
            Integer j = indexById.get(id);
            if (j == null) throw new SpecException("job " + id, "job_id", "is required but not in the batch");
            this.required[j] = true;
        }
        this.start = Map.copyOf(start);
    }

    /**
     * For each job, the same job allowed only its least contested GPU model, or null when it has one choice.
     * A model is contested when jobs that may run only on few models need it: the load on a model is the GPU
     * demand of the restricted jobs that allow it (split evenly over their models) per free GPU of that model.
     * Search methods may try a job "steered" this way first, so that flexible jobs leave scarce models to the
     * jobs that need them; the engine places either version with the same filters and rules.
     */
    private static JobSpec[] steer(ClusterState cluster, List<JobSpec> jobs) {
        Map<String, Double> free = new HashMap<>();
        for (var n : cluster.nodes()) if (!n.cordoned()) free.merge(n.model().id(), n.freeMilliTotal() / 1000.0, Double::sum);
        Map<String, Double> load = new HashMap<>();
        for (JobSpec s : jobs) {
            if (s.allowedModels().isEmpty()) continue;
            List<String> present = s.allowedModels().stream().filter(free::containsKey).toList();
            for (String m : present) load.merge(m, s.gpuMilliDemand() / 1000.0 / present.size(), Double::sum);
        }
        JobSpec[] out = new JobSpec[jobs.size()];
        for (int j = 0; j < jobs.size(); j++) {
            JobSpec s = jobs.get(j);
            List<String> options = cluster.modelIds().stream().filter(m -> s.allowedModels().isEmpty() || s.allowedModels().contains(m))
                    .filter(free::containsKey).toList();
            if (options.size() < 2) continue;
            String best = null;
            double bestLoad = Double.MAX_VALUE;
            for (String m : options) {
                double l = load.getOrDefault(m, 0.0) / Math.max(1e-9, free.get(m));
                if (l < bestLoad - 1e-12) { best = m; bestLoad = l; }
            }
            out[j] = new JobSpec(s.id(), s.tenant(), s.user(), s.name(), s.priority(), s.submitTimeMs(), s.shape(), s.share(),
                    java.util.Set.of(best), s.preemptible(), s.requireNvlink(), s.runtimeEstimateMs(), s.host(), s.timeLimitMs());
        }
        return out;
    }

    public static BatchProblem of(BatchPlacer.Batch batch) {
        return new BatchProblem(batch.cluster(), batch.pipeline(), batch.profile(), batch.jobs(), batch.required(), batch.start());
    }

    /** Weight of a priority in the objective: 1 for priority 0 or less, 1 + p up to {@link #MAX_PRIORITY}. */
    public static long weightOf(int priority) {
        return 1L + Math.clamp(priority, 0, MAX_PRIORITY);
    }

    public ClusterState cluster() { return cluster; }
    public PlacementPipeline pipeline() { return pipeline; }
    public WorkloadProfile profile() { return profile; }
    public List<JobSpec> jobs() { return jobs; }
    public int size() { return jobs.size(); }
    public JobSpec job(int j) { return jobs.get(j); }
    /** Index of a job by id, or -1. */
    public int indexOf(String id) { return indexById.getOrDefault(id, -1); }

    /** Whether every answer must place job j (a running job being re-packed). */
    public boolean required(int j) { return required[j]; }

    /** Whether some job is required. */
    public boolean hasRequired() {
        for (boolean r : required) if (r) return true;
        return false;
    }

    /** Whether the start placement places job j (for a re-pack: a running share). */
    public boolean inStart(int j) { return start.containsKey(jobs.get(j).id()); }

    /** Jobs of the start placement that this placement leaves out (a re-pack's preemptions). */
    public int leftOut(Map<String, io.gpupool.engine.state.Allocation> placement) {
        int n = 0;
        for (String id : start.keySet()) if (!placement.containsKey(id)) n++;
        return n;
    }

    /** A known feasible placement that places every required job (where they ran), or empty. */
    public Map<String, io.gpupool.engine.state.Allocation> start() { return start; }

    /** What placing job j adds to the objective: weight x GPU demand (thousandths of a GPU). */
    public long value(int j) { return values[j]; }

    public long totalValue() {
        long v = 0;
        for (long x : values) v += x;
        return v;
    }

    /** Jobs of one class need the same from every node: within one placement pass they fit or fail together. */
    public int shapeClass(int j) { return shapeClass[j]; }
    public int shapeClasses() { return shapeClasses; }

    /** A fresh placement attempt for job j on the cluster as it stands. */
    public CycleState cycle(int j) {
        return new CycleState(cluster, jobs.get(j), profile, null);
    }

    /** A placement attempt for job j allowed only its least contested model, or null (see {@link #steer}). */
    CycleState steeredCycle(int j) {
        return steered[j] == null ? null : new CycleState(cluster, steered[j], profile, null);
    }

    boolean steerable(int j) {
        return steered[j] != null;
    }

    public ReplicaDemand demand(int j) {
        return ReplicaDemand.of(jobs.get(j));
    }

    /** Total GPU demand of the window in GPUs. */
    public double demandGpus() {
        long m = 0;
        for (JobSpec s : jobs) m += s.gpuMilliDemand();
        return m / 1000.0;
    }

    private static String shapeKey(JobSpec s) {
        return s.shape() + "/" + s.share().milli() + "/" + s.share().memoryMib() + "/" + s.requireNvlink() + "/" + new TreeSet<>(s.allowedModels());
    }

    /** Job indices grouped by class, each group in window order. */
    List<List<Integer>> byShapeClass() {
        List<List<Integer>> out = new ArrayList<>();
        for (int c = 0; c < shapeClasses; c++) out.add(new ArrayList<>());
        for (int j = 0; j < jobs.size(); j++) out.get(shapeClass[j]).add(j);
        return out;
    }

    /** IDs of the batch's jobs (for checks). */
    Set<String> ids() {
        return new HashSet<>(indexById.keySet());
    }
}
