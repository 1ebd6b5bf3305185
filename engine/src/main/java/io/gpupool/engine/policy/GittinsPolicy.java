package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;

import java.util.Comparator;
import java.util.List;
import java.util.OptionalLong;

/**
 * Gittins-index scheduling with a service distribution learned online (Tiresias' dlas-gpu-gittins, NSDI'19): no
 * run-time estimates and no peek at the trace. Each finished job's service (GPUs x run time) goes into a histogram
 * over geometric service levels, per tenant and GPU-size class, per class, and overall ({@link ServiceHistory}); a job
 * is ranked by the Gittins index of its level in the most specific group with enough history ({@link GittinsIndex}):
 * the highest index first, then the lower level, then arrival. A pending job preempts running jobs of strictly lower
 * index. The indexes are recomputed when the history has grown by a tenth (so a waiting job's rank changes only
 * then, and the queue is re-sorted only then); a running job's index changes when its service crosses a level edge.
 * Before enough jobs finished the prior makes it least-attained-service first.
 */
public final class GittinsPolicy implements QueuePolicy, StandingOrder, Preemption, QuietRounds, CompletionObserver, RunObserver {
    /**
     * @param firstLevelGpuSec service (GPU-seconds) at which level 1 starts
     * @param levelRatio       each level's upper edge / its lower edge
     * @param minGroupJobs     finished jobs a tenant's size class (or a size class) needs before its own history is used
     */
    public record Args(double firstLevelGpuSec, double levelRatio, String groups, int minGroupJobs) implements PolicyArgs {
        private static final java.util.List<String> GROUPS = java.util.List.of("all", "size", "tenant-size");
        public static final Args DEFAULTS = new Args(60, 2, "all", 100);

        public Args {
            PolicyArgs.require(groups != null && GROUPS.contains(groups), "groups", "must be one of " + GROUPS + ", got '" + groups + "'");
            PolicyArgs.require(firstLevelGpuSec > 0, "firstLevelGpuSec", "must be positive, got " + firstLevelGpuSec);
            PolicyArgs.require(levelRatio > 1.01 && levelRatio <= 100, "levelRatio", "must be in (1.01, 100], got " + levelRatio);
            PolicyArgs.require(minGroupJobs >= 1, "minGroupJobs", "must be >= 1, got " + minGroupJobs);
        }
    }

    /** Levels reach 10^9 GPU-seconds (a 128-GPU gang for three months); beyond, the last level. */
    private static final double TOP_GPU_SEC = 1e9;
    /** The indexes are recomputed when the history has grown by this factor (and by at least a few jobs). */
    private static final double REFRESH_GROWTH = 1.1;
    private static final int REFRESH_MIN_STEP = 10;

    private static final PolicyTraits TRAITS = PolicyTraits.of(BlockingMode.SKIP, PolicyTraits.Trait.PREEMPTIVE,
            PolicyTraits.Trait.STANDING_ORDER, PolicyTraits.Trait.ALLOWED_VICTIMS_COME_FIRST, PolicyTraits.Trait.LATER_JOBS_MAY_PREEMPT_LESS);

    private final ServiceLevels levels;
    private final ServiceHistory history;
    private ServiceHistory.Table table;
    private long tableVersion;
    private long nextRefreshAt;
    /** Lowest index of a running job when this round's order was made: a job above it may have a victim. */
    double lowestRunning;   // package-private: a test compares it with a scan
    /** The running jobs' levels and indexes, kept across rounds in victim order. */
    private final RunningBands running;

    public GittinsPolicy(Args args) {
        this.levels = new ServiceLevels(args.firstLevelGpuSec(), args.levelRatio(), TOP_GPU_SEC);
        this.history = new ServiceHistory(levels, ServiceHistory.Groups.valueOf(args.groups().toUpperCase().replace('-', '_')), args.minGroupJobs());
        this.table = history.table();
        this.nextRefreshAt = REFRESH_MIN_STEP;
        this.running = new RunningBands(new RunningBands.Bands() {
            @Override public int bandOf(JobState job, long now) { return levelOf(job, now); }

            @Override public double upperEdgeGpuSec(int level) { return levels.upper(level); }

            @Override public double key(JobState job, int level) { return indexOf(table, job, level); }   // the lowest index first
        });
    }

    @Override public String name() { return "gittins"; }

    @Override public PolicyTraits traits() { return TRAITS; }

    @Override
    public void jobFinished(JobState job, long nowMs) {
        history.add(job, job.attainedGpuMs(nowMs) / 1000.0);
        if (history.observations() >= nextRefreshAt) {
            table = history.table();
            tableVersion++;
            running.rekey();
            nextRefreshAt = Math.max(history.observations() + REFRESH_MIN_STEP, (long) Math.ceil(history.observations() * REFRESH_GROWTH));
        }
    }

    @Override public long orderVersion() { return tableVersion; }

    @Override public void runStarted(JobState job) { running.started(job); }

    @Override public void runEnded(JobState job) { running.ended(job); }

    private int levelOf(JobState j, long nowMs) {
        return levels.levelOf(j.attainedGpuMs(nowMs) / 1000.0);
    }

    static double indexOf(ServiceHistory.Table t, JobState j, int level) {
        return t.indexesFor(j)[level];
    }

    /** Highest index first, then the lower level, then arrival; bound to the table of this moment. */
    @Override
    public Comparator<JobState> standingOrder(PolicyContext ctx) {
        long now = ctx.nowMs();
        ServiceHistory.Table t = table;
        lowestRunning = running.lowestKey(now);   // the lowest index comes first in victim order
        if (Double.isNaN(lowestRunning)) {   // asked for an earlier time than before: the plain scan
            lowestRunning = Double.POSITIVE_INFINITY;
            for (JobState j : ctx.running()) lowestRunning = Math.min(lowestRunning, indexOf(t, j, levelOf(j, now)));
        }
        return (a, b) -> {   // each job's level worked out once per comparison
            int la = levelOf(a, now), lb = levelOf(b, now);
            int c = Double.compare(-indexOf(t, a, la), -indexOf(t, b, lb));
            if (c != 0) return c;
            c = Integer.compare(la, lb);
            return c != 0 ? c : Long.compare(a.spec().submitTimeMs(), b.spec().submitTimeMs());
        };
    }

    /** {@link #standingOrder}'s order as the chain of comparators it stands for (a test compares the two). */
    Comparator<JobState> standingOrderChained(long now) {
        ServiceHistory.Table t = table;
        return Comparator.comparingDouble((JobState j) -> -indexOf(t, j, levelOf(j, now)))
                .thenComparingInt(j -> levelOf(j, now))
                .thenComparingLong(j -> j.spec().submitTimeMs());
    }

    double indexNow(PolicyContext ctx, JobState j) {   // package-private: a test scans with it
        return indexOf(table, j, levelOf(j, ctx.nowMs()));
    }

    /**
     * The last job {@link #blockedIndex} worked out, with what its index depends on (the table and the job's attained
     * GPU-time): a blocked job is asked for by {@link #mayPreemptAny} and then by its plan's bound.
     */
    JobState indexedJob;   // package-private: a test asks for it again later
    private ServiceHistory.Table indexedTable;
    private double indexedGpuMs;
    private double indexedValue;

    /** {@link #indexNow} for a blocked job, kept for the next ask while the job, the table and its attained GPU-time are the same. */
    double blockedIndex(PolicyContext ctx, JobState job) {   // package-private: a test compares it with indexNow
        double gpuMs = job.attainedGpuMs(ctx.nowMs());
        if (job != indexedJob || table != indexedTable || gpuMs != indexedGpuMs) {
            indexedJob = job;
            indexedTable = table;
            indexedGpuMs = gpuMs;
            indexedValue = indexOf(table, job, levels.levelOf(gpuMs / 1000.0));
        }
        return indexedValue;
    }

    @Override
    public boolean mayPreemptAny(PolicyContext ctx, JobState job) {
        return blockedIndex(ctx, job) > lowestRunning;
    }

    @Override
    public boolean mayPreempt(PolicyContext ctx, JobState job, JobState victim) {
        return indexNow(ctx, victim) < indexNow(ctx, job);
    }

    /** The index: the key {@link RunningBands} keeps while its list stands, else worked out for the job. */
    @Override
    public VictimRanks victimRanks(PolicyContext ctx, List<JobState> inVictimOrder) {
        return new VictimRanks() {
            @Override public double rankAt(int i) {
                return running.stillGives(inVictimOrder) ? running.storedKey(i) : indexNow(ctx, inVictimOrder.get(i));
            }

            @Override public double boundOf(JobState job) { return blockedIndex(ctx, job); }
        };
    }

    /** Lowest index first (the allowed victims of any job come first), then the cheapest; {@link #runningInVictimOrder} keeps the running jobs in it. */
    @Override
    public Comparator<JobState> victimOrder(PolicyContext ctx) {
        return Comparator.comparingDouble((JobState j) -> indexNow(ctx, j)).thenComparing(Preemption.cheapestFirst(ctx));
    }

    /** The running jobs in {@link #victimOrder}, kept in it across rounds ({@link RunningBands}). */
    @Override
    public List<JobState> runningInVictimOrder(PolicyContext ctx) {
        List<JobState> kept = running.inVictimOrder(ctx.nowMs());
        return kept != null ? kept : Preemption.super.runningInVictimOrder(ctx);
    }

    /**
     * A waiting job's index changes only with the table (refreshed at a job's end, which the round sees, and which
     * re-keys every running job): between rounds only the running jobs' indexes move, as their service crosses a level.
     */
    @Override
    public boolean mayDecideOtherwise(PolicyContext ctx, JobState first, int victimsTried) {
        double bound = first == null ? Double.NEGATIVE_INFINITY : indexNow(ctx, first);
        return running.mayAllowMore(ctx.nowMs(), bound, victimsTried);
    }

    /** The next moment a running job's service crosses a level edge (its index changes then). */
    @Override
    public OptionalLong nextReevaluationMs(PolicyContext ctx) {
        OptionalLong kept = running.nextCrossing(ctx.nowMs());
        return kept != null ? kept : nextCrossingScanned(ctx);
    }

    /** {@link #nextReevaluationMs} by a scan of every running job (what {@link RunningBands} answers without one). */
    OptionalLong nextCrossingScanned(PolicyContext ctx) {
        long now = ctx.nowMs();
        return EdgeCrossings.next(ctx, j -> levels.upper(levelOf(j, now)));
    }
}
