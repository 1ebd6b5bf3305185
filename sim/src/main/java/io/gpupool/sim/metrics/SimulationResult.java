package io.gpupool.sim.metrics;

import io.gpupool.engine.TenantConfig;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The outcome of one simulated policy, and the four goals computed from it: utilization, waiting,
 * completion time, fairness.
 */
public record SimulationResult(
        String policy,
        String placement,
        int totalGpus,
        List<JobOutcome> jobs,
        List<String> rejected,
        List<String> unfinished,
        Map<String, String> reasons,
        long preemptions,
        int rounds,
        List<long[]> timeline,
        Map<String, TenantConfig> tenants) {

    public long firstSubmitMs() {
        return jobs.stream().mapToLong(JobOutcome::submitMs).min().orElse(0);
    }

    public long makespanMs() {
        return jobs.isEmpty() ? 0 : jobs.stream().mapToLong(JobOutcome::finishMs).max().orElse(0) - firstSubmitMs();
    }

    /** GPU-time of completed jobs over GPU-time the pool offered between first submit and last finish. */
    public double utilization() {
        long span = makespanMs();
        if (span <= 0 || totalGpus == 0) return 0;
        double used = jobs.stream().mapToDouble(j -> j.gpus() * j.runMs()).sum();
        return used / ((double) totalGpus * span);
    }

    /** GPU-time per tenant of completed jobs, in GPU-hours. */
    public Map<String, Double> gpuHoursByTenant() {
        Map<String, Double> m = new TreeMap<>();
        for (JobOutcome j : jobs) m.merge(j.tenant(), j.gpus() * j.runMs() / 3_600_000.0, Double::sum);
        return m;
    }

    /**
     * Jain's index over tenants' GPU-time normalised by entitlement (weight share): 1 = every tenant got
     * exactly its entitlement's proportion, 1/n = one tenant got everything.
     */
    public double jainFairness() {
        Map<String, Double> use = gpuHoursByTenant();
        if (use.size() <= 1) return 1.0;
        double wsum = 0;
        for (String t : use.keySet()) wsum += weight(t);
        double sum = 0, sq = 0;
        for (var e : use.entrySet()) {
            double x = e.getValue() / (weight(e.getKey()) / wsum);
            sum += x;
            sq += x * x;
        }
        return sq == 0 ? 1.0 : sum * sum / (use.size() * sq);
    }

    private double weight(String tenant) {
        TenantConfig c = tenants.get(tenant);
        return c == null ? 1.0 : c.weight();
    }

    public double[] sortedJctSec() {
        return jobs.stream().mapToDouble(j -> j.jctMs() / 1000.0).sorted().toArray();
    }

    public double[] sortedWaitSec() {
        return jobs.stream().mapToDouble(j -> j.waitMs() / 1000.0).sorted().toArray();
    }

    /** Nearest-rank percentile of a sorted array (p in 0..100); 0 when empty. */
    public static double percentile(double[] sorted, double p) {
        if (sorted.length == 0) return 0;
        int rank = (int) Math.ceil(p / 100.0 * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
    }

    static double mean(double[] a) {
        return a.length == 0 ? 0 : Arrays.stream(a).sum() / a.length;
    }

    /** The report fields (DESIGN.md contract names), in display order. */
    public Map<String, Object> summary() {
        double[] jct = sortedJctSec();
        double[] wait = sortedWaitSec();
        double[] slow = jobs.stream().mapToDouble(JobOutcome::slowdown).sorted().toArray();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("policy", policy);
        m.put("placement", placement);
        m.put("jobs", jobs.size());
        m.put("rejected", rejected.size());
        m.put("unfinished", unfinished.size());
        m.put("avg_jct_s", round(mean(jct)));
        m.put("p50_jct_s", round(percentile(jct, 50)));
        m.put("p95_jct_s", round(percentile(jct, 95)));
        m.put("p99_jct_s", round(percentile(jct, 99)));
        m.put("avg_wait_s", round(mean(wait)));
        m.put("p95_wait_s", round(percentile(wait, 95)));
        m.put("max_wait_s", round(wait.length == 0 ? 0 : wait[wait.length - 1]));
        m.put("avg_slowdown", round(mean(slow)));
        m.put("makespan_s", round(makespanMs() / 1000.0));
        m.put("utilization", round4(utilization()));
        m.put("jain_fairness", round4(jainFairness()));
        m.put("preemptions", preemptions);
        return m;
    }

    private static double round(double v) { return Math.round(v * 1000) / 1000.0; }

    private static double round4(double v) { return Math.round(v * 10000) / 10000.0; }
}
