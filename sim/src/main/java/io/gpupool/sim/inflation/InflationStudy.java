package io.gpupool.sim.inflation;

import io.gpupool.engine.RoundResult;
import io.gpupool.engine.Scheduler;
import io.gpupool.engine.SchedulerConfig;
import io.gpupool.engine.SubmitResult;
import io.gpupool.engine.batch.BatchPlacer;
import io.gpupool.engine.placement.PlacementConfig;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.JobSpec;
import io.gpupool.model.SpecException;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Workload inflation, the evaluation method of the FGD paper (Weng et al., ATC'23): tasks are drawn from a
 * trace with replacement (seeded; every placement sees the same draws), none ever departs, and each is
 * placed at once by the engine's placement pipeline or counted as not allocated. As the arrived GPU
 * demand grows past the pool's capacity, the curve records the share of it that was allocated and the
 * pool's GPUs left unallocated: a placement that fragments less keeps allocating longer.
 *
 * <p>Each task goes through {@link Scheduler#submit} and one round ({@code fcfs}, one task queued), so
 * admission, filters, the GPU policy and the scorers are exactly the engine's. The task mix FGD measures
 * fragmentation against is known from the start, as in the paper (its typical tasks come from the whole
 * trace): the scheduler's workload profile observes every task of the list once before the first draw, then
 * learns from the tasks submitted as usual. Without it, FGD's first decisions would know only the few tasks
 * drawn so far and break up the rare large hosts that only a rare large task can use.
 *
 * <p>CPU-only tasks (openb pods with no GPU) are drawn and placed like the others, through the same pipeline:
 * they take host CPU and memory, so GPUs on a node whose CPU they exhausted can strand. They add nothing
 * to the arrived GPU demand (the curve is in GPU terms), and FGD's typical tasks are the GPU tasks (a CPU-only
 * task can use no GPU anywhere).
 */
public final class InflationStudy {
    /**
     * @param arrivedPct     GPU demand arrived so far, in % of the pool's GPUs
     * @param allocatedPct   % of the arrived GPU demand that was allocated
     * @param unallocatedGpus the pool's GPUs (in GPU units, shares count fractionally) not allocated
     */
    public record Point(double arrivedPct, double allocatedPct, double unallocatedGpus) {}

    public record Curve(String placement, List<Point> curve) {}

    /**
     * What the placement decisions of a run cost: the rounds run, the tasks they decided on, their wall time
     * in total and the longest round's.
     */
    public record Decisions(int rounds, long tasks, double totalSeconds, double maxRoundSeconds) {
        public double msPerTask() { return tasks == 0 ? 0 : 1000 * totalSeconds / tasks; }
    }

    /** A look-ahead run: its curve and the cost of its decisions. */
    public record LookAheadRun(Curve curve, Decisions decisions) {}

    /**
     * What the re-packs of a run did and cost: how many ran, the running shares they took off in total, how many
     * of those changed GPU (migrations), the most any one moved, the pending tasks they started, the shares they
     * preempted (a re-pack that may preempt) and the most any one preempted, and their wall time.
     */
    public record Repacks(int repacks, long sharesConsidered, long moved, int maxMoved, long started, long preempted, int maxPreempted,
                          double totalSeconds, double maxSeconds) {
        /** Migrations per share running at the re-pack, over all re-packs. */
        public double movedShare() { return sharesConsidered == 0 ? 0 : (double) moved / sharesConsidered; }
        public double meanSeconds() { return repacks == 0 ? 0 : totalSeconds / repacks; }
    }

    /** A run with periodic re-packing: its curve and what the re-packs did. */
    public record RepackRun(Curve curve, Repacks repacks) {}

    /**
     * Online with periodic re-packing: each task is placed on arrival by the placement, as in {@link #run}, but a
     * task that does not fit stays pending instead of being turned away; once {@code every} tasks have arrived
     * since the last re-pack and some task is pending, the running GPU-share tasks are re-packed together with the
     * pending ones ({@link Scheduler#repack}: whole-GPU tasks stay put, shares may change GPU, pending tasks that
     * fit start). A point counts what is running when arrived demand crosses it. The policy is {@code fair-share}
     * with one tenant, so that a pending task does not block the arrivals behind it.
     */
    public RepackRun runRepack(String label, PlacementConfig placement, BatchPlacer repacker, int every) {
        return runRepack(label, placement, repacker, every, 0);
    }

    /** As {@link #runRepack(String, PlacementConfig, BatchPlacer, int)}, each re-pack taking off only the shares on the {@code gpus} most stranded shared GPUs (0: all). */
    public RepackRun runRepack(String label, PlacementConfig placement, BatchPlacer repacker, int every, int gpus) {
        return runRepack(label, placement, repacker, every, gpus, false);
    }

    /**
     * As {@link #runRepack(String, PlacementConfig, BatchPlacer, int, int)}; with {@code preempt} a re-pack may leave
     * running shares out when that allocates more ({@link Scheduler#repack(BatchPlacer, int, boolean, long)}): they
     * wait again, no longer counted as allocated, and start again when they fit.
     */
    public RepackRun runRepack(String label, PlacementConfig placement, BatchPlacer repacker, int every, int gpus, boolean preempt) {
        if (gpus < 0) throw new SpecException("inflation", "gpus", "must be >= 0, got " + gpus);
        if (every < 1) throw new SpecException("inflation", "every", "must be >= 1 task, got " + every);
        Scheduler scheduler = new Scheduler(cluster, SchedulerConfig.defaults("fair-share").withPlacement(placement));
        for (JobSpec t : tasks) scheduler.workloadProfile().observe(t);
        SplittableRandom rnd = new SplittableRandom(seed);
        long capacity = cluster.totalGpus() * 1000L;
        long arrived = 0, allocated = 0, considered = 0, moved = 0, started = 0, preempted = 0, nanos = 0, maxNanos = 0;
        int nextMark = 1, repacks = 0, maxMoved = 0, maxPreempted = 0, sinceRepack = 0;
        java.util.Map<String, Long> demandOfAll = new java.util.HashMap<>();   // every accepted task's demand
        java.util.Map<String, Long> demandOf = new java.util.HashMap<>();   // pending tasks' demand
        List<Point> points = new ArrayList<>();
        for (long i = 0; arrived * 100.0 / capacity < maxArrivedPct; i++) {
            JobSpec task = draw(rnd, i);
            arrived += task.gpuMilliDemand();
            sinceRepack++;
            if (scheduler.submit(task, i).accepted()) {
                demandOf.put(task.id(), task.gpuMilliDemand());
                demandOfAll.put(task.id(), task.gpuMilliDemand());
                for (String id : scheduler.schedule(i).started()) allocated += demandOf.remove(id);
            } else {
                scheduler.forget(task.id());
            }
            if (sinceRepack >= every && !demandOf.isEmpty()) {
                long t0 = System.nanoTime();
                Scheduler.RepackResult r = scheduler.repack(repacker, gpus, preempt, i);
                long took = System.nanoTime() - t0;
                sinceRepack = 0;
                repacks++;
                nanos += took;
                maxNanos = Math.max(maxNanos, took);
                considered += r.shares();
                moved += r.moved();
                maxMoved = Math.max(maxMoved, r.moved());
                started += r.started().size();
                for (String id : r.started()) allocated += demandOf.remove(id);
                preempted += r.preempted().size();
                maxPreempted = Math.max(maxPreempted, r.preempted().size());
                for (String id : r.preempted()) {   // waiting again
                    allocated -= demandOfAll.get(id);
                    demandOf.put(id, demandOfAll.get(id));
                }
            }
            while (arrived * 100.0 / capacity >= nextMark * stepPct) {
                points.add(new Point(round2(arrived * 100.0 / capacity), round2(allocated * 100.0 / arrived), round2((capacity - allocated) / 1000.0)));
                nextMark++;
            }
        }
        return new RepackRun(new Curve(label, points), new Repacks(repacks, considered, moved, maxMoved, started, preempted, maxPreempted, nanos / 1e9, maxNanos / 1e9));
    }

    /**
     * The offline answer at one demand level: every task arrived by then placed at once; {@code minUnallocatedGpus}
     * is what no placement of them can go below, from the placer's bound (NaN when it gives none).
     */
    public record Offline(Point point, int tasks, double seconds, double minUnallocatedGpus) {}

    private final ClusterSpec cluster;
    private final List<JobSpec> tasks;
    private final long seed;
    private final double maxArrivedPct;
    private final double stepPct;

    /**
     * @param tasks          the task list to draw from (GPU tasks, and CPU-only tasks if any)
     * @param maxArrivedPct  stop once this much demand (in % of the pool's GPUs) has arrived
     * @param stepPct        a point each time arrived demand crosses a multiple of this
     */
    public InflationStudy(ClusterSpec cluster, List<JobSpec> tasks, long seed, double maxArrivedPct, double stepPct) {
        // without GPU demand arriving the study would never end
        if (tasks.stream().allMatch(JobSpec::cpuOnly)) throw new SpecException("inflation", "trace", "the task list has no GPU task to draw");
        if (!(stepPct > 0 && stepPct <= 5)) throw new SpecException("inflation", "step", "must be in (0, 5] %, got " + stepPct);
        if (!(maxArrivedPct >= 100)) throw new SpecException("inflation", "max", "must be >= 100 %, got " + maxArrivedPct);
        this.cluster = cluster;
        this.tasks = List.copyOf(tasks);
        this.seed = seed;
        this.maxArrivedPct = maxArrivedPct;
        this.stepPct = stepPct;
    }

    /** Parses one placement of {@code --placement a,b,c}: '+' joins scorers; scores every feasible node unless limit= is given. */
    public static PlacementConfig placement(String item) {
        PlacementConfig pc = PlacementConfig.parse(item.replace('+', ','));
        return item.contains("limit=") ? pc : pc.withCandidateLimit(0);
    }

    public Curve run(String label, PlacementConfig placement) {
        Scheduler scheduler = new Scheduler(cluster, SchedulerConfig.defaults("fcfs").withPlacement(placement));
        for (JobSpec t : tasks) scheduler.workloadProfile().observe(t);
        SplittableRandom rnd = new SplittableRandom(seed);
        // demand in thousandths of a GPU, kept as integers so that percentages and marks are exact
        long capacity = cluster.totalGpus() * 1000L;
        long arrived = 0, allocated = 0;
        int nextMark = 1;
        List<Point> points = new ArrayList<>();
        for (long i = 0; arrived * 100.0 / capacity < maxArrivedPct; i++) {
            JobSpec task = draw(rnd, i);
            long demand = task.gpuMilliDemand();
            arrived += demand;
            SubmitResult r = scheduler.submit(task, i);
            if (r.accepted()) {
                RoundResult round = scheduler.schedule(i);
                if (round.started().contains(task.id())) allocated += demand;
                else scheduler.cancel(task.id(), i);
            }
            if (scheduler.job(task.id()).status().terminal()) scheduler.forget(task.id());
            while (arrived * 100.0 / capacity >= nextMark * stepPct) {
                points.add(new Point(round2(arrived * 100.0 / capacity), round2(allocated * 100.0 / arrived), round2((capacity - allocated) / 1000.0)));
                nextMark++;
            }
        }
        return new Curve(label, points);
    }

    /**
     * Online with a look-ahead window: arrivals are held and placed together every {@code hold} tasks, in one
     * engine round with the batch placer (batch mode), then one by one as usual. A task the round leaves
     * pending is not allocated, as in {@link #run}: nothing departs, so a task that does not fit now never will.
     * A point crossed while tasks are held is taken when they are decided, over the tasks arrived by the point:
     * the held tasks arrived by then count as allocated if the round started them (each waited at most
     * {@code hold} arrivals for its decision). The round's policy is {@code fair-share} with one tenant (oldest
     * first, a task that does not fit does not block the others); the placer's window should cover {@code hold}.
     */
    public LookAheadRun runLookAhead(String label, PlacementConfig placement, BatchPlacer batch, int hold) {
        return runLookAhead(label, placement, batch, hold, 0);
    }

    /**
     * As {@link #runLookAhead(String, PlacementConfig, BatchPlacer, int)}, but each task is placed on arrival by
     * the placement alone (no batch placer, no wait) until the pool's allocated GPUs reach {@code fromPct} % of
     * it; from then on arrivals are held. Near a full pool is where a joint decision pays; before it tasks wait for nothing.
     */
    public LookAheadRun runLookAhead(String label, PlacementConfig placement, BatchPlacer batch, int hold, double fromPct) {
        if (hold < 1) throw new SpecException("inflation", "hold", "must be >= 1 task, got " + hold);
        if (!(fromPct >= 0 && fromPct <= 100)) throw new SpecException("inflation", "hold-from", "must be in [0, 100] %, got " + fromPct);
        Scheduler scheduler = new Scheduler(cluster, SchedulerConfig.defaults("fair-share").withPlacement(placement));
        boolean holding = fromPct == 0;
        if (holding) scheduler.setBatchPlacer(batch);
        for (JobSpec t : tasks) scheduler.workloadProfile().observe(t);
        SplittableRandom rnd = new SplittableRandom(seed);
        long capacity = cluster.totalGpus() * 1000L;
        long arrived = 0;
        int nextMark = 1;
        Window window = new Window(scheduler, capacity);
        for (long i = 0; arrived * 100.0 / capacity < maxArrivedPct; i++) {
            JobSpec task = draw(rnd, i);
            arrived += task.gpuMilliDemand();
            if (scheduler.submit(task, i).accepted()) window.held.add(task);
            else scheduler.forget(task.id());
            while (arrived * 100.0 / capacity >= nextMark * stepPct) {
                window.marks.add(new long[] {arrived, window.held.size()});
                nextMark++;
            }
            if (!holding || window.held.size() >= hold || window.held.isEmpty() || !(arrived * 100.0 / capacity < maxArrivedPct)) window.decide(i);
            if (!holding && window.allocated * 100.0 / capacity >= fromPct) {
                holding = true;
                scheduler.setBatchPlacer(batch);
            }
        }
        return new LookAheadRun(new Curve(label, window.points),
                new Decisions(window.rounds, window.decided, window.roundNanos / 1e9, window.maxRoundNanos / 1e9));
    }

    /** The held tasks of a look-ahead run, the points waiting for their decision, and what deciding cost. */
    private static final class Window {
        final Scheduler scheduler;
        final long capacity;
        final List<JobSpec> held = new ArrayList<>();
        final List<long[]> marks = new ArrayList<>();   // {arrived demand at the point, tasks held by then}
        final List<Point> points = new ArrayList<>();
        long allocated, decided, roundNanos, maxRoundNanos;
        int rounds;

        Window(Scheduler scheduler, long capacity) {
            this.scheduler = scheduler;
            this.capacity = capacity;
        }

        /** One round over the held tasks (if any), then the points they were waiting for. */
        void decide(long nowMs) {
            long[] placed = new long[held.size() + 1];   // placed[k]: demand started among the first k held tasks
            if (!held.isEmpty()) {
                long t0 = System.nanoTime();
                RoundResult round = scheduler.schedule(nowMs);
                long took = System.nanoTime() - t0;
                rounds++;
                decided += held.size();
                roundNanos += took;
                maxRoundNanos = Math.max(maxRoundNanos, took);
                java.util.Set<String> started = new java.util.HashSet<>(round.started());
                for (int k = 0; k < held.size(); k++) {
                    JobSpec t = held.get(k);
                    placed[k + 1] = placed[k] + (started.contains(t.id()) ? t.gpuMilliDemand() : 0);
                    if (!started.contains(t.id())) scheduler.cancel(t.id(), nowMs);
                    scheduler.forget(t.id());
                }
            }
            for (long[] m : marks) {
                long a = allocated + placed[(int) m[1]];
                points.add(new Point(round2(m[0] * 100.0 / capacity), round2(a * 100.0 / m[0]), round2((capacity - a) / 1000.0)));
            }
            allocated += placed[held.size()];
            marks.clear();
            held.clear();
        }
    }

    /**
     * The offline answer at {@code arrivedPct}: the same draws as {@link #run} up to the first that brings
     * arrived demand to {@code arrivedPct} % of the pool, all pending at once and placed in one round with the
     * batch placer (whose window should cover them all), then one by one ({@code fair-share}, oldest first).
     */
    public Offline offline(PlacementConfig placement, BatchPlacer batch, double arrivedPct) {
        Scheduler scheduler = new Scheduler(cluster, SchedulerConfig.defaults("fair-share").withPlacement(placement));
        scheduler.setBatchPlacer(batch);
        for (JobSpec t : tasks) scheduler.workloadProfile().observe(t);
        SplittableRandom rnd = new SplittableRandom(seed);
        long capacity = cluster.totalGpus() * 1000L;
        long arrived = 0;
        List<JobSpec> drawn = new ArrayList<>();
        for (long i = 0; arrived * 100.0 / capacity < arrivedPct; i++) {
            JobSpec task = draw(rnd, i);
            arrived += task.gpuMilliDemand();
            drawn.add(task);
            scheduler.submit(task, 0);
        }
        long t0 = System.nanoTime();
        RoundResult round = scheduler.schedule(0);
        double seconds = (System.nanoTime() - t0) / 1e9;
        java.util.Set<String> started = new java.util.HashSet<>(round.started());
        long allocated = drawn.stream().filter(t -> started.contains(t.id())).mapToLong(JobSpec::gpuMilliDemand).sum();
        // tasks have priority 0 (weight 1): the bound is in thousandths of a GPU of demand
        double floor = batch.lastBound().isPresent() ? round2(Math.max(0, capacity - Math.min(arrived, batch.lastBound().getAsLong())) / 1000.0) : Double.NaN;
        return new Offline(new Point(round2(arrived * 100.0 / capacity), round2(allocated * 100.0 / arrived), round2((capacity - allocated) / 1000.0)),
                drawn.size(), seconds, floor);
    }

    /** Draw {@code i} of the study: a task of the list, with a fresh id (the same for every method). */
    private JobSpec draw(SplittableRandom rnd, long i) {
        JobSpec drawn = tasks.get(rnd.nextInt(tasks.size()));
        return JobSpec.builder("task-" + i).shape(drawn.shape()).share(drawn.share())
                .allowedModels(drawn.allowedModels()).host(drawn.host()).submitMs(i).build();
    }

    private static double round2(double v) {
        return Math.round(v * 100) / 100.0;
    }
}
