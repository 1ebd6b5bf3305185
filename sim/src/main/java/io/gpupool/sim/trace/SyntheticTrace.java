package io.gpupool.sim.trace;

import io.gpupool.model.GangShape;
import io.gpupool.model.GpuShare;
import io.gpupool.model.JobSpec;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A seeded synthetic workload shaped like published GPU-cluster traces (Philly, Helios):
 * <ul>
 *   <li>GPUs per job: 1 (70%), 2 (10%), 4 (8%), 8 (8%), 16 (3%), 32 (1%); among 1-GPU jobs a
 *       {@code fractionalShare} are GPU shares of 100..900 milli in steps of 100;</li>
 *   <li>run time: log-normal, median {@code medianRunSec}, sigma 1.6 (heavy tail), clipped to [30 s, 7 d];</li>
 *   <li>arrivals: Poisson with a diurnal rate, peak at 14:00, trough 30% of peak at 02:00;</li>
 *   <li>tenants: {@code tenants} teams with Zipf(1) popularity; users 4 per tenant; names from a few
 *       recurring job kinds, so history-based prediction has something to learn.</li>
 * </ul>
 */
public final class SyntheticTrace {
    private static final int[] GPU_COUNTS = {1, 2, 4, 8, 16, 32};
    private static final double[] GPU_PROBS = {0.70, 0.10, 0.08, 0.08, 0.03, 0.01};
    private static final String[] KINDS = {"train-resnet", "train-bert", "finetune-llm", "eval", "hparam-sweep", "notebook"};

    private SyntheticTrace() {}

    /**
     * @param jobs             number of jobs
     * @param meanArrivalSec   mean time between arrivals (the diurnal curve averages to it)
     * @param medianRunSec     median run time
     * @param tenants          number of tenants
     * @param fractionalShare  share of 1-GPU jobs that ask for a fraction of a GPU
     */
    public static List<TraceJob> generate(long seed, int jobs, double meanArrivalSec, double medianRunSec, int tenants, double fractionalShare) {
        SplittableRandom rnd = new SplittableRandom(seed);
        double[] tenantCdf = zipfCdf(tenants);
        List<TraceJob> out = new ArrayList<>(jobs);
        double t = 0;
        for (int i = 0; i < jobs; i++) {
            t = nextArrival(rnd, t, meanArrivalSec);
            int gpus = GPU_COUNTS[pick(rnd, GPU_PROBS)];
            double run = Math.exp(Math.log(medianRunSec) + 1.6 * gaussian(rnd));
            long runMs = Math.round(Math.min(7 * 86400.0, Math.max(30.0, run)) * 1000);
            int tenant = pickCdf(rnd, tenantCdf);
            String kind = KINDS[rnd.nextInt(KINDS.length)];
            JobSpec.Builder b = JobSpec.builder("job-" + (i + 1))
                    .submitMs(Math.round(t * 1000))
                    .shape(GangShape.forGpuCount(gpus, GangShape.DEFAULT_MAX_GPUS_PER_REPLICA))
                    .tenant("team-" + (char) ('a' + tenant))
                    .user("user-" + (char) ('a' + tenant) + rnd.nextInt(4))
                    .name(kind)
                    .priority(rnd.nextInt(10) == 0 ? 10 : 0);
            if (gpus == 1 && rnd.nextDouble() < fractionalShare) b.share(new GpuShare(100 * (1 + rnd.nextInt(9)), 0));
            out.add(new TraceJob(b.build(), runMs));
        }
        return out;
    }

    /** Thinning of a Poisson process whose rate follows the hour of day. */
    private static double nextArrival(SplittableRandom rnd, double t, double meanGapSec) {
        double peakRate = 1.0 / meanGapSec / 0.65;   // the curve below averages to 0.65 of its peak
        while (true) {
            t += -Math.log(1 - rnd.nextDouble()) / peakRate;
            double hour = (t / 3600.0) % 24.0;
            double rel = 0.65 + 0.35 * Math.cos((hour - 14.0) / 24.0 * 2 * Math.PI);
            if (rnd.nextDouble() < rel) return t;
        }
    }

    private static double gaussian(SplittableRandom rnd) {
        double u = 1 - rnd.nextDouble(), v = rnd.nextDouble();
        return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
    }

    private static int pick(SplittableRandom rnd, double[] probs) {
        double x = rnd.nextDouble(), acc = 0;
        for (int i = 0; i < probs.length; i++) {
            acc += probs[i];
            if (x < acc) return i;
        }
        return probs.length - 1;
    }

    private static double[] zipfCdf(int n) {
        double[] cdf = new double[n];
        double sum = 0;
        for (int i = 0; i < n; i++) sum += 1.0 / (i + 1);
        double acc = 0;
        for (int i = 0; i < n; i++) { acc += 1.0 / (i + 1) / sum; cdf[i] = acc; }
        return cdf;
    }

    private static int pickCdf(SplittableRandom rnd, double[] cdf) {
        double x = rnd.nextDouble();
        for (int i = 0; i < cdf.length; i++) if (x < cdf[i]) return i;
        return cdf.length - 1;
    }

    /** Writes jobs in the gpupool trace CSV format. */
    public static String toCsv(List<TraceJob> jobs) {
        StringBuilder sb = new StringBuilder("job_id,submit_time,duration,num_gpus,gpu_milli,tenant,user,priority,name\n");
        for (TraceJob j : jobs) {
            JobSpec s = j.spec();
            sb.append(s.id()).append(',').append(s.submitTimeMs() / 1000.0).append(',').append(j.durationMs() / 1000.0).append(',')
                    .append(s.totalGpus()).append(',').append(s.share().milli()).append(',').append(s.tenant()).append(',')
                    .append(s.user()).append(',').append(s.priority()).append(',').append(s.name()).append('\n');
        }
        return sb.toString();
    }
}
