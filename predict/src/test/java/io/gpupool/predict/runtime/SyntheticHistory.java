package io.gpupool.predict.runtime;

import io.gpupool.model.JobSpec;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * A job history with known structure: each user runs a few kinds of jobs whose run times are log-normal
 * around a median set by the kind and scaled per user (training runs ~10 h on 8 GPUs, evaluations ~5 min,
 * sweeps ~1 h on 2 GPUs, debug runs ~2 min); names carry run numbers and hashes, as real ones do.
 * Interactive notebooks depend on the hour they start: from 18:00 to 06:00 they are left running overnight
 * (~12 h), by day they run ~2 h. Only a model that sees the hour of submission can tell them apart.
 */
final class SyntheticHistory {
    record Kind(String prefix, double medianSeconds, int gpus) {}

    static final List<Kind> KINDS = List.of(
            new Kind("train-llama", 10 * 3600, 8),
            new Kind("eval-llama", 5 * 60, 1),
            new Kind("sweep-lr", 3600, 2),
            new Kind("debug", 120, 1),
            new Kind("notebook", 2 * 3600, 1));

    private SyntheticHistory() {}

    /** {@code n} jobs over about 30 days from {@code users} users in 3 tenants; seeded, so always the same. */
    static List<FinishedJob> generate(int n, int users, long seed) {
        Random rnd = new Random(seed);
        double[] userScale = new double[users];
        for (int u = 0; u < users; u++) userScale[u] = Math.exp(rnd.nextGaussian() * 0.7);
        List<FinishedJob> jobs = new ArrayList<>();
        long t = 0;
        for (int i = 0; i < n; i++) {
            t += (long) (rnd.nextDouble() * 2 * 30L * 86_400_000L / n);
            int u = rnd.nextInt(users);
            Kind k = KINDS.get(rnd.nextInt(KINDS.size()));
            double median = k.medianSeconds();
            if (k.prefix().equals("notebook") && isNight(t)) median = 12 * 3600;
            double seconds = median * userScale[u] * Math.exp(rnd.nextGaussian() * 0.3);
            String name = switch (k.prefix()) {
                case "train-llama" -> "train-llama-run" + rnd.nextInt(500);
                case "eval-llama" -> "eval-llama-" + Integer.toHexString(0x100000 + rnd.nextInt(0xEFFFFF));
                case "sweep-lr" -> "sweep-lr" + (1 + rnd.nextInt(9)) + "e-" + (3 + rnd.nextInt(3));
                case "notebook" -> "notebook";
                default -> "debug";
            };
            JobSpec spec = JobSpec.builder("j" + i).user("user" + u).tenant("team" + (u % 3)).name(name)
                    .submitMs(t).gpus(k.gpus()).build();
            jobs.add(new FinishedJob(spec, Math.max(1000, Math.round(seconds * 1000))));
        }
        return jobs;
    }

    static boolean isNight(long submitMs) {
        long hour = (submitMs / 3_600_000L) % 24;
        return hour >= 18 || hour < 6;
    }
}
