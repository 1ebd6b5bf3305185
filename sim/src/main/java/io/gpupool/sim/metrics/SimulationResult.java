package io.gpupool.sim.metrics;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The four goals for one replay under one policy, with the series behind the report's charts.
 * Times in seconds unless named otherwise.
 *
 * @param policy          queue policy
 * @param placement       placement configuration label
 * @param trace           trace label
 * @param totalGpus       GPUs of the pool
 * @param jobs            jobs completed (what the statistics below are over)
 * @param rejected        jobs the engine refused at submit (could never run on this pool)
 * @param unfinished      jobs still queued when nothing was left to run (quota, policy rules)
 * @param timeLimited     jobs of the trace with a time limit (submitted and accepted)
 * @param timeouts        completed jobs that their time limit stopped (counted in {@code jobs})
 * @param preemptions     times a running job was preempted
 * @param rounds          scheduling rounds the engine ran
 * @param jct             job completion time (finish - submit): mean, p50, p95, p99
 * @param waiting         time queued (over all waits of a job): mean, p95, p99, max
 * @param slowdown        JCT / run time: mean, p95 (finish-time fairness when the job had the pool alone)
 * @param makespanSec     first submit to last finish
 * @param utilization     allocated GPU-time / GPU-time the pool offered over the makespan
 * @param fragmentation   time-average share of the pool's GPU capacity that was free but usable by no queued job
 * @param jainFairness    Jain's index over tenants' GPU-time / fair share in windows of contention ({@link FairnessWindows})
 * @param tenants         per tenant: jobs, GPU-time, share vs entitlement
 * @param timeline        queue length, utilization, fragmentation and per-tenant GPUs over time
 * @param jctCdf          JCT quantiles (seconds) at 0.5%, 1%, ... 100% of jobs, for the CDF chart
 * @param fairness        the fairness windows behind {@code jainFairness}
 * @param rejectReasons   a few rejected or unfinished jobs and why
 * @param energy          GPU energy over the makespan and, with node power-down, what it did (null: not measured, e.g. a
 *                        result that was recorded rather than simulated)
 */
public record SimulationResult(
        String policy,
        String placement,
        String trace,
        int totalGpus,
        long jobs,
        long rejected,
        long unfinished,
        long timeLimited,
        long timeouts,
        long preemptions,
        long rounds,
        Stats jct,
        Stats waiting,
        Stats slowdown,
        double makespanSec,
        double utilization,
        double fragmentation,
        double jainFairness,
        List<TenantResult> tenants,
        Timeline timeline,
        double[] jctCdf,
        List<FairnessWindows.Window> fairness,
        Map<String, String> rejectReasons,
        Energy energy) {

    /** A result without energy figures (they are left out of every output). */
    public SimulationResult(String policy, String placement, String trace, int totalGpus, long jobs, long rejected, long unfinished,
                            long timeLimited, long timeouts, long preemptions, long rounds, Stats jct, Stats waiting, Stats slowdown,
                            double makespanSec, double utilization, double fragmentation, double jainFairness, List<TenantResult> tenants,
                            Timeline timeline, double[] jctCdf, List<FairnessWindows.Window> fairness, Map<String, String> rejectReasons) {
        this(policy, placement, trace, totalGpus, jobs, rejected, unfinished, timeLimited, timeouts, preemptions, rounds, jct, waiting,
                slowdown, makespanSec, utilization, fragmentation, jainFairness, tenants, timeline, jctCdf, fairness, rejectReasons, null);
    }

    /**
     * GPU energy from the first submit to the last finish (docs/architecture.md, "Energy").
     *
     * @param kwh        all GPUs' energy: busy and idle GPUs of powered-on nodes, and powered-off nodes' off power
     * @param idleKwh    the part no job was charged for: idle GPUs (and the idle part of shared GPUs' unallocated
     *                   capacity) of powered-on nodes, and powered-off nodes
     * @param powerDown  what node power-down did; null when it was off
     */
    public record Energy(double kwh, double idleKwh, PowerDownResult powerDown) {}

    /**
     * Node power-down over the makespan.
     *
     * @param settings            the {@code --power-down} parameters
     * @param asleepNodeHours     node-hours spent powered off
     * @param wakeups             nodes woken up
     * @param wakeWaitSec         job-seconds spent queued only because the nodes a job needed were waking up
     * @param avgWakeWaitSec      {@code wakeWaitSec} over the completed jobs
     * @param jobsWaitedForWake   jobs that waited for a wake-up at some point
     * @param poweredUtilization  allocated GPU-time / GPU-time of powered-on nodes (waking ones included)
     * @param nodeUtilization     node-time some job used a node / node-time nodes were powered on (Helios' CES measure)
     */
    public record PowerDownResult(String settings, double asleepNodeHours, long wakeups, double wakeWaitSec, double avgWakeWaitSec,
                                  long jobsWaitedForWake, double poweredUtilization, double nodeUtilization) {}

    /** Mean and percentiles of one per-job quantity. */
    public record Stats(double mean, double p50, double p95, double p99, double max) {
        public static final Stats EMPTY = new Stats(0, 0, 0, 0, 0);
    }

    /**
     * One tenant.
     *
     * @param gpuHours      GPU-time of its completed jobs
     * @param share         its part of all GPU-time used
     * @param entitledShare its part of all fair GPU-time while jobs waited (weighted max-min given its demand)
     * @param heldVsFair    GPU-time held / fair GPU-time while jobs waited (1 = got exactly its entitlement)
     * @param energyKwh     GPU energy charged to its jobs' runs (NaN: not measured)
     */
    public record TenantResult(String tenant, double weight, long jobs, double gpuHours, double share,
                               double entitledShare, double heldVsFair, double avgWaitSec, double energyKwh) {
        /** Without energy ({@code energyKwh} NaN: left out of the outputs). */
        public TenantResult(String tenant, double weight, long jobs, double gpuHours, double share, double entitledShare,
                            double heldVsFair, double avgWaitSec) {
            this(tenant, weight, jobs, gpuHours, share, entitledShare, heldVsFair, avgWaitSec, Double.NaN);
        }
    }

    /**
     * Per-bucket averages: queued jobs, GPUs in use, fragmented GPUs, and each tenant's GPUs held and fair
     * share (GPUs), in buckets of {@code bucketSec} from {@code startSec} (seconds from the first submit).
     */
    public record Timeline(double bucketSec, double[] queued, double[] usedGpus, double[] fragmentedGpus,
                           List<String> tenants, double[][] tenantGpus, double[][] tenantFairGpus) {}

    /** The report fields (docs/contracts.md, "Simulation output"), in display order. */
    public Map<String, Object> summary() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("policy", policy);
        m.put("placement", placement);
        m.put("jobs", jobs);
        m.put("rejected", rejected);
        m.put("unfinished", unfinished);
        // only for traces with time limits, so the results of every other trace stay as they were
        if (timeLimited > 0) m.put("timeouts", timeouts);
        m.put("avg_jct_s", r3(jct.mean()));
        m.put("p50_jct_s", r3(jct.p50()));
        m.put("p95_jct_s", r3(jct.p95()));
        m.put("p99_jct_s", r3(jct.p99()));
        m.put("avg_wait_s", r3(waiting.mean()));
        m.put("p95_wait_s", r3(waiting.p95()));
        m.put("p99_wait_s", r3(waiting.p99()));
        m.put("max_wait_s", r3(waiting.max()));
        m.put("avg_slowdown", r3(slowdown.mean()));
        m.put("p95_slowdown", r3(slowdown.p95()));
        m.put("makespan_s", r3(makespanSec));
        m.put("utilization", r4(utilization));
        m.put("fragmentation", r4(fragmentation));
        m.put("jain_fairness", r4(jainFairness));
        m.put("preemptions", preemptions);
        if (energy != null) {
            m.put("energy_kwh", r3(energy.kwh()));
            m.put("idle_energy_kwh", r3(energy.idleKwh()));
            PowerDownResult p = energy.powerDown();
            // only with --power-down, so that the results of every other replay keep their fields
            if (p != null) {
                m.put("power_down", p.settings());
                m.put("asleep_node_hours", r3(p.asleepNodeHours()));
                m.put("wakeups", p.wakeups());
                m.put("wake_wait_s", r3(p.wakeWaitSec()));
                m.put("avg_wake_wait_s", r3(p.avgWakeWaitSec()));
                m.put("jobs_waited_for_wake", p.jobsWaitedForWake());
                m.put("powered_utilization", r4(p.poweredUtilization()));
                m.put("node_utilization", r4(p.nodeUtilization()));
            }
        }
        return m;
    }

    /** Per-tenant rows for JSON. */
    public List<Map<String, Object>> tenantRows() {
        return tenants.stream().map(t -> {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("tenant", t.tenant());
            m.put("weight", t.weight());
            m.put("jobs", t.jobs());
            m.put("gpu_hours", r3(t.gpuHours()));
            m.put("share", r4(t.share()));
            m.put("entitled_share", r4(t.entitledShare()));
            m.put("held_vs_fair", r4(t.heldVsFair()));
            m.put("avg_wait_s", r3(t.avgWaitSec()));
            if (!Double.isNaN(t.energyKwh())) m.put("energy_kwh", r3(t.energyKwh()));
            return m;
        }).toList();
    }

    static double r3(double v) { return Math.round(v * 1000) / 1000.0; }

    static double r4(double v) { return Math.round(v * 10000) / 10000.0; }
}
