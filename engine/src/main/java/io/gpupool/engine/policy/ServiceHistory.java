package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;

import java.util.HashMap;
import java.util.Map;

/**
 * What finished jobs' total service (GPU-seconds) looked like, learned online: a count per service level for all
 * jobs, per GPU-size class, and per tenant and class. {@link #table()} turns them into Gittins indexes, resolved from
 * the most specific group with enough jobs; a small prior spread over every level keeps the index defined beyond
 * anything seen (and makes it least-attained-service-first before anything finished).
 */
final class ServiceHistory {
    /** Which groups have their own distribution. */
    enum Groups { ALL, SIZE, TENANT_SIZE }

    private final Groups groups;
    /** A group needs this many finished jobs before its own distribution is used. */
    private final int minJobs;
    private final ServiceLevels levels;
    private final double[] all;
    private final Map<Integer, double[]> bySize = new HashMap<>();
    private final Map<String, double[][]> byTenantSize = new HashMap<>();   // tenant -> size class -> counts
    private long observations;

    ServiceHistory(ServiceLevels levels, Groups groups, int minJobs) {
        this.levels = levels;
        this.groups = groups;
        this.minJobs = minJobs;
        this.all = new double[levels.count()];
    }

    long observations() { return observations; }

    void add(JobState job, double serviceGpuSec) {
        int level = levels.levelOf(serviceGpuSec);
        int size = sizeClass(job);
        all[level]++;
        bySize.computeIfAbsent(size, k -> new double[levels.count()])[level]++;
        byTenantSize.computeIfAbsent(job.spec().tenant(), k -> new double[SIZE_CLASSES][levels.count()])[size][level]++;
        observations++;
    }

    static final int SIZE_CLASSES = 4;

    /** Jobs of 1, 2-4, 5-8 and more GPUs have different services (a gang's run is GPUs x time). */
    static int sizeClass(JobState job) {
        double g = job.gpuUnits();
        return g <= 1 ? 0 : g <= 4 ? 1 : g <= 8 ? 2 : 3;
    }

    /**
     * The indexes as they stand: an immutable table, so an order built on it stays consistent until replaced. Only
     * finished jobs count; jobs still running are not taken as censored observations (Kaplan-Meier), which would be
     * the textbook estimate: on Philly it ranked long-running jobs lower and made the mean JCT worse (7.2 h against
     * 6.6 h), as it preempts more (docs/results-philly.md).
     */
    Table table() {
        double[] global = indexes(all);
        Map<Integer, double[]> sizes = new HashMap<>();
        Map<String, double[][]> tenants = new HashMap<>();
        if (groups == Groups.ALL) return new Table(levels, global, sizes, tenants);
        bySize.forEach((k, c) -> { if (sum(c) >= minJobs) sizes.put(k, indexes(c)); });
        if (groups == Groups.SIZE) return new Table(levels, global, sizes, tenants);
        byTenantSize.forEach((tenant, bySizeClass) -> {
            double[][] t = new double[SIZE_CLASSES][];
            for (int size = 0; size < SIZE_CLASSES; size++) {
                if (sum(bySizeClass[size]) >= minJobs) t[size] = indexes(bySizeClass[size]);
            }
            tenants.put(tenant, t);
        });
        return new Table(levels, global, sizes, tenants);
    }

    /** Gittins indexes of a group's counts plus the prior. */
    private double[] indexes(double[] finished) {
        double[] counts = new double[finished.length];
        for (int i = 0; i < counts.length; i++) counts[i] = finished[i] + PRIOR_PER_LEVEL;
        return GittinsIndex.of(levels, counts);
    }

    /** A thousandth of a job per level: invisible next to real counts, decisive where there are none. */
    private static final double PRIOR_PER_LEVEL = 1e-3;

    private static double sum(double[] c) {
        double s = 0;
        for (double v : c) s += v;
        return s;
    }

    /** Indexes per level for each group, looked up per job. */
    record Table(ServiceLevels levels, double[] global, Map<Integer, double[]> bySize, Map<String, double[][]> byTenantSize) {
        double[] indexesFor(JobState job) {
            // one distribution for all (the default groups): the job's fields are not read (a cache miss or more for
            // each running job a round ranks)
            if (bySize.isEmpty() && byTenantSize.isEmpty()) return global;
            int size = sizeClass(job);
            double[][] tenant = byTenantSize.get(job.spec().tenant());
            double[] t = tenant != null ? tenant[size] : null;
            if (t != null) return t;
            t = bySize.get(size);
            return t != null ? t : global;
        }
    }
}
