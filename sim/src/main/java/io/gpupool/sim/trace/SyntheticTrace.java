package io.gpupool.sim.trace;

import io.gpupool.model.GangShape;
import io.gpupool.model.GpuShare;
import io.gpupool.model.JobSpec;
import io.gpupool.model.SpecException;

import java.util.NoSuchElementException;
import java.util.SplittableRandom;

/**
 * A seeded synthetic workload shaped like the published statistics of production GPU clusters (Helios,
 * SC'21, its cluster summary table, see docs/traces.md; Philly). Generated lazily in submit
 * order, so a million-job trace costs no memory; the same seed always gives the same jobs.
 * <ul>
 *   <li><b>GPUs per job</b>: 1 (70%), 2 (10%), 4 (8%), 8 (8%), 16 (2.5%), 32 (1%), 64 (0.5%); counts larger
 *       than the pool are left out and the rest renormalised. Mean 2.9 GPUs, median 1 (Helios: mean
 *       2.1..6.7, median 1 in all four clusters). Among 1-GPU jobs a {@code fractionalShare} ask for a
 *       share of 100..900 milli (steps of 100).</li>
 *   <li><b>Run time</b>: log-normal, median {@value #MEDIAN_RUN_SEC} s, sigma {@value #SIGMA} (heavy tail:
 *       the mean is ~{@value #MEAN_RUN_SEC_APPROX} s, close to the Helios total of 6,652 s), clipped to [{@value #MIN_RUN_SEC} s, 7 days]
 *       (Helios GPU jobs: median 124..280 s, mean 5,131..13,041 s).</li>
 *   <li><b>Arrivals</b>: Poisson with a diurnal rate (peak at 14:00, trough 30% of the peak at 02:00),
 *       scaled so that the offered load (GPU-time demanded / GPU-time available) is {@code load}.</li>
 *   <li><b>Tenants</b>: {@code tenants} teams with Zipf(1) popularity, 4 users each; job names from six
 *       recurring kinds (so history-based prediction has something to learn); 10% of jobs priority 10.</li>
 * </ul>
 */
public final class SyntheticTrace implements Trace {
    static final double MEDIAN_RUN_SEC = 200;
    static final double SIGMA = 2.8;
    static final double MIN_RUN_SEC = 10;
    static final double MAX_RUN_SEC = 7 * 86400;
    static final int MEAN_RUN_SEC_APPROX = 6_560;
    private static final int[] GPU_COUNTS = {1, 2, 4, 8, 16, 32, 64};
    private static final double[] GPU_PROBS = {0.70, 0.10, 0.08, 0.08, 0.025, 0.01, 0.005};
    private static final String[] KINDS = {"train-resnet", "train-bert", "finetune-llm", "eval", "hparam-sweep", "notebook"};

    /**
     * @param seed            random seed
     * @param jobs            number of jobs
     * @param load            offered load against {@code poolGpus} (0.9 = 90% of the pool's GPU-time)
     * @param poolGpus        GPUs of the pool the trace is meant for
     * @param tenants         number of tenants (1..26)
     * @param fractionalShare share of 1-GPU jobs that ask for a fraction of a GPU
     */
    public record Params(long seed, int jobs, double load, int poolGpus, int tenants, double fractionalShare) {
        public Params {
            if (jobs < 0) throw new SpecException("synthetic", "jobs", "must be >= 0, got " + jobs);
            if (!(load > 0)) throw new SpecException("synthetic", "load", "must be > 0, got " + load);
            if (poolGpus < 1) throw new SpecException("synthetic", "pool GPUs", "must be >= 1, got " + poolGpus);
            if (tenants < 1 || tenants > 26) throw new SpecException("synthetic", "tenants", "must be in 1..26, got " + tenants);
            if (!(fractionalShare >= 0 && fractionalShare <= 1)) throw new SpecException("synthetic", "fractional", "must be in [0, 1], got " + fractionalShare);
        }
    }

    private final Params p;
    private final double[] gpuCdf;
    private final double meanGapSec;

    public SyntheticTrace(Params p) {
        this.p = p;
        double[] probs = new double[GPU_COUNTS.length];
        double sum = 0;
        for (int i = 0; i < probs.length; i++) {
            probs[i] = GPU_COUNTS[i] <= p.poolGpus() ? GPU_PROBS[i] : 0;
            sum += probs[i];
        }
        gpuCdf = new double[probs.length];
        double acc = 0, meanGpus = 0;
        for (int i = 0; i < probs.length; i++) {
            acc += probs[i] / sum;
            gpuCdf[i] = acc;
            meanGpus += GPU_COUNTS[i] * probs[i] / sum;
        }
        // a fractional job holds on average half a GPU
        meanGpus -= probs[0] / sum * p.fractionalShare() * 0.5;
        meanGapSec = meanGpus * meanRunSec() / (p.load() * p.poolGpus());
    }

    /** Mean of the clipped log-normal run time, by numerical integration (the clip trims the mean ~3%). */
    static double meanRunSec() {
        double mu = Math.log(MEDIAN_RUN_SEC), sum = 0;
        int steps = 20_000;
        for (int i = 0; i < steps; i++) {
            double z = -8 + 16.0 * (i + 0.5) / steps;
            double x = Math.min(MAX_RUN_SEC, Math.max(MIN_RUN_SEC, Math.exp(mu + SIGMA * z)));
            sum += x * Math.exp(-z * z / 2) / Math.sqrt(2 * Math.PI) * 16.0 / steps;
        }
        return sum;
    }

    @Override
    public String label() {
        return "synthetic (" + p.jobs() + " jobs, seed " + p.seed() + ", load " + p.load() + ")";
    }

    @Override
    public TraceStats stats() { return TraceStats.of(p.jobs()); }

    @Override
    public Cursor open() {
        SplittableRandom rnd = new SplittableRandom(p.seed());
        double[] tenantCdf = zipfCdf(p.tenants());
        return new Cursor() {
            int i;
            double t;

            @Override public boolean hasNext() { return i < p.jobs(); }

            @Override
            public TraceJob next() {
                if (i >= p.jobs()) throw new NoSuchElementException();
                i++;
                t = nextArrival(rnd, t, meanGapSec);
                int gpus = GPU_COUNTS[pickCdf(rnd, gpuCdf)];
                double run = Math.exp(Math.log(MEDIAN_RUN_SEC) + SIGMA * gaussian(rnd));
                long runMs = Math.round(Math.min(MAX_RUN_SEC, Math.max(MIN_RUN_SEC, run)) * 1000);
                int tenant = pickCdf(rnd, tenantCdf);
                String kind = KINDS[rnd.nextInt(KINDS.length)];
                JobSpec.Builder b = JobSpec.builder("job-" + i)
                        .submitMs(Math.round(t * 1000))
                        .shape(GangShape.forGpuCount(gpus, GangShape.DEFAULT_MAX_GPUS_PER_REPLICA))
                        .tenant("team-" + (char) ('a' + tenant))
                        .user("user-" + (char) ('a' + tenant) + rnd.nextInt(4))
                        .name(kind)
                        .priority(rnd.nextInt(10) == 0 ? 10 : 0);
                if (gpus == 1 && rnd.nextDouble() < p.fractionalShare()) b.share(new GpuShare(100 * (1 + rnd.nextInt(9)), 0));
                return new TraceJob(b.build(), runMs);
            }

            @Override public void close() {}
        };
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

    /** The jobs in the gpupool trace CSV format (to save a synthetic trace as a file). */
    public static void writeCsv(Trace trace, Appendable out) throws java.io.IOException {
        out.append("job_id,submit_time,duration,num_gpus,gpu_milli,tenant,user,priority,name\n");
        try (Cursor c = trace.open()) {
            while (c.hasNext()) {
                TraceJob j = c.next();
                JobSpec s = j.spec();
                out.append(s.id()).append(',').append(Double.toString(s.submitTimeMs() / 1000.0)).append(',')
                        .append(Double.toString(j.durationMs() / 1000.0)).append(',').append(Integer.toString(s.totalGpus())).append(',')
                        .append(Integer.toString(s.share().milli())).append(',').append(s.tenant()).append(',').append(s.user()).append(',')
                        .append(Integer.toString(s.priority())).append(',').append(s.name()).append('\n');
            }
        }
    }
}
