package io.gpupool.bench;

import io.gpupool.model.GangShape;
import io.gpupool.model.GpuShare;
import io.gpupool.model.JobSpec;

import java.util.SplittableRandom;

/**
 * A seeded, endless stream of jobs for whole-round benchmarks on a single-model pool: mixed shapes, tenants,
 * users, priorities, names and run-time estimates, so every policy has something to order by.
 * <ul>
 *   <li>shapes: a fraction of one GPU, 100..900 milli (15%); 1 GPU (35%); 2 (15%); 4 (15%); 8 (12%);
 *       gangs of 2x8 (5%) and 4x8 (3%);</li>
 *   <li>tenants: 8 teams with Zipf(1) popularity, 3 users each; priority 0 (80%), 5 (15%), 10 (5%);</li>
 *   <li>six recurring job names (history prediction learns them); 60% give an estimate of 10 min..4 h;</li>
 *   <li>the true run time ({@link #runtimeMs}, for the clairvoyant policy): log-uniform in 5 min..24 h.</li>
 * </ul>
 */
final class MixedJobs {
    private static final String[] NAMES = {"train-resnet", "train-bert", "finetune-llm", "eval", "hparam-sweep", "notebook"};
    private static final double[] TENANT_CDF = zipfCdf(8);

    private final SplittableRandom rnd;
    private final String prefix;
    private long next;

    MixedJobs(long seed, String prefix) {
        this.rnd = new SplittableRandom(seed);
        this.prefix = prefix;
    }

    /** A job submitted at {@code nowMs}. */
    JobSpec next(long nowMs) {
        int tenant = pick(TENANT_CDF);
        JobSpec.Builder b = JobSpec.builder(newId())
                .submitMs(nowMs)
                .tenant("team-" + tenant)
                .user("user-" + tenant + "-" + rnd.nextInt(3))
                .name(NAMES[rnd.nextInt(NAMES.length)]);
        double p = rnd.nextDouble();
        b.priority(p < 0.80 ? 0 : p < 0.95 ? 5 : 10);
        if (rnd.nextDouble() < 0.60) b.estimateSec(600 + rnd.nextInt(4 * 3600 - 600));
        double s = rnd.nextDouble();
        if (s < 0.15) b.shape(new GangShape(1, 1)).share(new GpuShare(100 * (1 + rnd.nextInt(9)), 0));
        else if (s < 0.50) b.shape(1, 1);
        else if (s < 0.65) b.shape(1, 2);
        else if (s < 0.80) b.shape(1, 4);
        else if (s < 0.92) b.shape(1, 8);
        else if (s < 0.97) b.shape(2, 8);
        else b.shape(4, 8);
        return b.build();
    }

    /** A fresh job like {@code job} (same shape, tenant, user, name, priority, estimate), submitted at {@code nowMs}. */
    JobSpec like(JobSpec job, long nowMs) {
        return new JobSpec(newId(), job.tenant(), job.user(), job.name(), job.priority(), nowMs, job.shape(), job.share(),
                job.allowedModels(), job.preemptible(), job.requireNvlink(), job.runtimeEstimateMs(), job.host(), job.timeLimitMs());
    }

    /** A true run time for a new job: log-uniform in 5 min..24 h. */
    long runtimeMs() {
        return Math.round(Math.exp(Math.log(300_000) + rnd.nextDouble() * Math.log(86_400_000 / 300_000.0)));
    }

    /** A uniform draw in [0, n), for the benchmark's own choices (which running job completes). */
    int nextInt(int n) {
        return rnd.nextInt(n);
    }

    private String newId() {
        return prefix + next++;
    }

    private int pick(double[] cdf) {
        double x = rnd.nextDouble();
        for (int i = 0; i < cdf.length; i++) if (x < cdf[i]) return i;
        return cdf.length - 1;
    }

    private static double[] zipfCdf(int n) {
        double[] cdf = new double[n];
        double sum = 0, acc = 0;
        for (int i = 1; i <= n; i++) sum += 1.0 / i;
        for (int i = 0; i < n; i++) cdf[i] = acc += 1.0 / (i + 1) / sum;
        return cdf;
    }
}
