package io.gpupool.bench;

import io.gpupool.model.GangShape;
import io.gpupool.model.GpuShare;
import io.gpupool.model.JobSpec;

import java.util.Set;
import java.util.SplittableRandom;

/**
 * A seeded, endless stream of jobs with the benchmark's mix:
 * <ul>
 *   <li>30% fractional: one GPU, {@code gpu_milli} 100..900 in steps of 10 (HAMi's percent granularity);
 *       a third of them also cap memory (2, 4, 8, 12 or 20 GiB), the rest take memory in proportion;</li>
 *   <li>70% whole GPUs: 1 (40%), 2 (20%), 4 (20%), 8 (15%) GPUs, or a 2x8 gang (5%); a quarter of the
 *       4- and 8-GPU jobs require one NVLink domain;</li>
 *   <li>20% of all jobs restrict the GPU model (A100/H100, H100 only, V100/T4, or L40S/A100).</li>
 * </ul>
 * Every job fits the empty {@link BenchCluster}, so none is rejected at submit.
 */
public final class JobStream {
    private static final long[] MEMORY_CAPS_MIB = {2048, 4096, 8192, 12288, 20480};
    private static final Set<String> BIG = Set.of("A100-80GB", "H100-80GB");
    private static final Set<String> H100 = Set.of("H100-80GB");
    private static final Set<String> OLD = Set.of("V100-32GB", "T4");
    private static final Set<String> MID = Set.of("L40S", "A100-80GB");

    private final SplittableRandom rnd;
    private final String prefix;
    private long next;
    private long submitMs;

    public JobStream(long seed, String prefix) {
        this.rnd = new SplittableRandom(seed);
        this.prefix = prefix;
    }

    /** The next job; {@code submitMs} is its submit time (the stream keeps it non-decreasing). */
    public JobSpec next(long submitMs) {
        this.submitMs = Math.max(this.submitMs, submitMs);
        JobSpec.Builder b = JobSpec.builder(prefix + (next++))
                .tenant("team-" + rnd.nextInt(8))
                .submitMs(this.submitMs)
                .estimateSec(600 + rnd.nextInt(3 * 3600));
        double kind = rnd.nextDouble();
        if (kind < 0.30) {
            int milli = 100 + 10 * rnd.nextInt(81);
            long mem = rnd.nextInt(3) == 0 ? MEMORY_CAPS_MIB[rnd.nextInt(MEMORY_CAPS_MIB.length)] : 0;
            b.shape(new GangShape(1, 1)).share(new GpuShare(milli, mem));
        } else {
            double w = rnd.nextDouble();
            if (w < 0.40) b.shape(1, 1);
            else if (w < 0.60) b.shape(1, 2);
            else if (w < 0.80) b.shape(1, 4);
            else if (w < 0.95) b.shape(1, 8);
            else b.shape(2, 8);
            if ((w >= 0.60 && w < 0.95) && rnd.nextInt(4) == 0) b.requireNvlink(true);
        }
        if (rnd.nextInt(5) == 0) {
            b.allowedModels(switch (rnd.nextInt(4)) {
                case 0 -> BIG;
                case 1 -> H100;
                case 2 -> OLD;
                default -> MID;
            });
        }
        JobSpec j = b.build();
        // an 8-GPU NVLink replica cannot go to V100 (two 4-GPU domains), L40S or T4 (no NVLink): keep it feasible
        if (j.requireNvlink() && j.shape().gpusPerReplica() == 8 && !j.allowedModels().isEmpty()
                && !j.allowedModels().contains("A100-80GB") && !j.allowedModels().contains("H100-80GB")) {
            return JobSpec.builder(j.id()).tenant(j.tenant()).submitMs(j.submitTimeMs()).shape(j.shape())
                    .requireNvlink(true).estimateMs(j.runtimeEstimateMs().getAsLong()).build();
        }
        return j;
    }
}
