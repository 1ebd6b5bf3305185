package io.gpupool.sim.inflation;

import io.gpupool.engine.RoundResult;
import io.gpupool.engine.Scheduler;
import io.gpupool.engine.SchedulerConfig;
import io.gpupool.engine.SubmitResult;
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
            JobSpec drawn = tasks.get(rnd.nextInt(tasks.size()));
            JobSpec task = JobSpec.builder("task-" + i).shape(drawn.shape()).share(drawn.share())
                    .allowedModels(drawn.allowedModels()).host(drawn.host()).submitMs(i).build();
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

    private static double round2(double v) {
        return Math.round(v * 100) / 100.0;
    }
}
