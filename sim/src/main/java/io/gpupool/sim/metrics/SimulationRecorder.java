package io.gpupool.sim.metrics;

import io.gpupool.engine.TenantConfig;
import io.gpupool.engine.state.ClusterState;
import io.gpupool.engine.state.GpuGrant;
import io.gpupool.model.JobSpec;
import io.gpupool.sim.energy.EnergyModel;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Watches one replay and computes the four goals. The simulator reports each event (submit, start,
 * preemption, completion) and the end of each instant; between instants the pool's state is constant,
 * so every "over time" quantity is an exact time integral of a step function. Per completed job only
 * three numbers are kept (JCT, wait, run time), so a million-job replay needs a few dozen MB here.
 */
public final class SimulationRecorder {
    /** Timeline quantities; tenant t uses TENANT_BASE + 2t (GPUs held) and TENANT_BASE + 2t + 1 (fair share). */
    private static final int Q_QUEUED = 0, Q_USED = 1, Q_FRAG = 2, TENANT_BASE = 3;
    private static final int MAX_BUCKETS = 512;
    private static final int CDF_POINTS = 200;
    private static final int REASONS_KEPT = 20;

    private final ClusterState cluster;
    private final Map<String, TenantConfig> tenantConfig;
    private final long windowMs;
    private final FragmentationTracker fragmentation;
    private final long totalMilli;
    private final PowerMeter power;
    private String powerDown;           // the --power-down settings, null when off

    // tenants
    private final Map<String, Integer> tenantIndex = new HashMap<>();
    private final List<String> tenantNames = new ArrayList<>();
    private double[] weight = new double[8];
    private long[] held = new long[8];
    private long[] demand = new long[8];
    private double[] fair = new double[8];
    private long[] tenantJobs = new long[8];
    private double[] tenantGpuMs = new double[8];
    private double[] tenantWaitMs = new double[8];
    private double[] tenantHeldContended = new double[8];
    private double[] tenantFairContended = new double[8];
    private double[] tenantEnergyJ = new double[8];
    private int[] active = new int[8];
    private int[] fillOrder = new int[8];   // water-filling's scratch, as long as active
    private int activeCount;
    private boolean demandChanged;

    // state between instants
    private long lastMs = Long.MIN_VALUE;
    private long queued;
    private long usedMilli;
    private long fragMilli;
    private TimeSeries series;
    private FairnessWindows windows;
    private double usedIntegral;
    private double fragIntegral;

    // per completed job
    private long[] jct = new long[1024], wait = new long[1024], run = new long[1024];
    private int done;
    private long firstSubmitMs = Long.MAX_VALUE, lastFinishMs = Long.MIN_VALUE;
    private long rejected;
    private long timeLimited, timeouts;
    private final Map<String, String> reasons = new LinkedHashMap<>();
    private PowerMeter.Snapshot powerAtLastFinish = PowerMeter.Snapshot.ZERO;
    private double usedIntegralAtLastFinish;

    public SimulationRecorder(ClusterState cluster, Map<String, TenantConfig> tenants, long fairnessWindowMs) {
        this(cluster, tenants, fairnessWindowMs, EnergyModel.DEFAULT);
    }

    public SimulationRecorder(ClusterState cluster, Map<String, TenantConfig> tenants, long fairnessWindowMs, EnergyModel energy) {
        this.power = new PowerMeter(cluster, energy);
        this.cluster = cluster;
        this.tenantConfig = tenants;
        this.windowMs = fairnessWindowMs;
        this.fragmentation = new FragmentationTracker(cluster);
        this.totalMilli = cluster.totalMilli();
    }

    // ---- events ---------------------------------------------------------------------------------

    /** Time moves to {@code nowMs}: the state since the last instant held until now. */
    public void advanceTo(long nowMs) {
        if (lastMs == Long.MIN_VALUE) {
            series = new TimeSeries(nowMs, 60_000, MAX_BUCKETS, TENANT_BASE + 2 * tenantNames.size() + 2);
            windows = new FairnessWindows(nowMs, windowMs);
            lastMs = nowMs;
            return;
        }
        if (nowMs <= lastMs) return;
        long dt = nowMs - lastMs;
        power.advance(dt);
        series.add(Q_QUEUED, lastMs, nowMs, queued);
        series.add(Q_USED, lastMs, nowMs, usedMilli / 1000.0);
        series.add(Q_FRAG, lastMs, nowMs, fragMilli / 1000.0);
        usedIntegral += (double) usedMilli * dt;
        fragIntegral += (double) fragMilli * dt;
        series.ensureQuantities(TENANT_BASE + 2 * tenantNames.size());
        boolean contended = queued > 0;
        for (int k = 0; k < activeCount; k++) {
            int t = active[k];
            series.add(TENANT_BASE + 2 * t, lastMs, nowMs, held[t] / 1000.0);
            series.add(TENANT_BASE + 2 * t + 1, lastMs, nowMs, fair[t] / 1000.0);
            if (contended) {
                tenantHeldContended[t] += (double) held[t] * dt;
                tenantFairContended[t] += fair[t] * dt;
            }
        }
        windows.add(lastMs, nowMs, contended, active, activeCount, held, fair);
        lastMs = nowMs;
    }

    public void submitted(JobSpec job) {
        firstSubmitMs = Math.min(firstSubmitMs, job.submitTimeMs());
        if (job.timeLimitMs().isPresent()) timeLimited++;
        int t = tenant(job.tenant());
        if (demand[t] == 0 && held[t] == 0) activate(t);
        demand[t] += job.gpuMilliDemand();
        demandChanged = true;
        queued++;
        fragmentation.queued(job);
    }

    public void rejected(JobSpec job, String reason) {
        firstSubmitMs = Math.min(firstSubmitMs, job.submitTimeMs());
        rejected++;
        if (reasons.size() < REASONS_KEPT) reasons.put(job.id(), reason);
    }

    public void started(JobSpec job, int[] nodes) {
        held[tenant(job.tenant())] += job.gpuMilliDemand();
        queued--;
        fragmentation.dequeued(job);
        for (int n : nodes) fragmentation.touched(n);
    }

    /** The grants of a run that started in this instant (after {@link #started}): what it draws from now. */
    public void runsOn(JobSpec job, List<List<GpuGrant>> replicas) {
        power.runStarted(job.id(), replicas, lastMs);
    }

    public void preempted(JobSpec job, int[] nodes) {
        int t = tenant(job.tenant());
        tenantEnergyJ[t] += power.runStopped(job.id(), lastMs);
        held[t] -= job.gpuMilliDemand();
        queued++;
        fragmentation.queued(job);
        for (int n : nodes) fragmentation.touched(n);
    }

    /** A job finished: its outcome and the nodes it freed. */
    public void completed(JobSpec job, JobOutcome o, int[] nodes) {
        int t = tenant(job.tenant());
        tenantEnergyJ[t] += power.runStopped(job.id(), lastMs);
        held[t] -= job.gpuMilliDemand();
        demand[t] -= job.gpuMilliDemand();
        demandChanged = true;
        for (int n : nodes) fragmentation.touched(n);
        if (done == jct.length) {
            jct = Arrays.copyOf(jct, done * 2);
            wait = Arrays.copyOf(wait, done * 2);
            run = Arrays.copyOf(run, done * 2);
        }
        jct[done] = o.jctMs();
        wait[done] = o.waitMs();
        run[done] = o.runMs();
        done++;
        tenantJobs[t]++;
        tenantGpuMs[t] += o.gpus() * o.runMs();
        tenantWaitMs[t] += o.waitMs();
        lastFinishMs = Math.max(lastFinishMs, o.finishMs());
        powerAtLastFinish = power.snapshot();
        usedIntegralAtLastFinish = usedIntegral;
        if (o.timedOut()) timeouts++;
    }

    /** The instant is over (after the round): the state from now until the next instant. */
    public void instantDone() {
        usedMilli = cluster.usedMilli();
        fragMilli = fragmentation.fragmentedMilli();
        if (demandChanged) {
            int k = 0;
            for (int i = 0; i < activeCount; i++) {
                int t = active[i];
                if (demand[t] > 0 || held[t] > 0) active[k++] = t;
                else fair[t] = 0;
            }
            activeCount = k;
            if (fillOrder.length < active.length) fillOrder = new int[active.length];
            FairnessWindows.waterFill(totalMilli, active, activeCount, demand, weight, fair, fillOrder);
            demandChanged = false;
        }
    }

    private void activate(int t) {
        for (int k = 0; k < activeCount; k++) if (active[k] == t) return;
        if (activeCount == active.length) active = Arrays.copyOf(active, activeCount * 2);
        active[activeCount++] = t;
    }

    private int tenant(String name) {
        Integer i = tenantIndex.get(name);
        if (i != null) return i;
        int t = tenantNames.size();
        tenantIndex.put(name, t);
        tenantNames.add(name);
        if (t == held.length) {
            int len = t * 2;
            weight = Arrays.copyOf(weight, len);
            held = Arrays.copyOf(held, len);
            demand = Arrays.copyOf(demand, len);
            fair = Arrays.copyOf(fair, len);
            tenantJobs = Arrays.copyOf(tenantJobs, len);
            tenantGpuMs = Arrays.copyOf(tenantGpuMs, len);
            tenantWaitMs = Arrays.copyOf(tenantWaitMs, len);
            tenantHeldContended = Arrays.copyOf(tenantHeldContended, len);
            tenantFairContended = Arrays.copyOf(tenantFairContended, len);
            tenantEnergyJ = Arrays.copyOf(tenantEnergyJ, len);
        }
        TenantConfig c = tenantConfig.get(name);
        weight[t] = c == null ? 1.0 : c.weight();
        return t;
    }

    /** The pool's power: a power-down control reports node power states and wake waits to it. */
    public PowerMeter power() {
        return power;
    }

    /** Node power-down is on, with these settings (as {@code --power-down} gives them): the result reports it. */
    public void powerDown(String settings) {
        this.powerDown = settings;
    }

    // ---- result ---------------------------------------------------------------------------------

    /** The four goals; {@code unfinished} jobs were still queued when the replay ended. */
    public SimulationResult finish(String policy, String placement, String trace, long unfinished, Map<String, String> unfinishedReasons,
                                   long preemptions, long rounds) {
        if (windows == null) advanceTo(0);
        List<FairnessWindows.Window> fw = windows.finish();
        long[] jctS = Arrays.copyOf(jct, done), waitS = Arrays.copyOf(wait, done);
        double[] slow = new double[done];
        for (int i = 0; i < done; i++) slow[i] = jct[i] / (double) run[i];
        Arrays.sort(jctS);
        Arrays.sort(waitS);
        Arrays.sort(slow);
        double makespanMs = done == 0 ? 0 : lastFinishMs - firstSubmitMs;
        double util = makespanMs <= 0 ? 0 : usedIntegral / (totalMilli * makespanMs);
        double frag = makespanMs <= 0 ? 0 : fragIntegral / (totalMilli * makespanMs);
        Map<String, String> why = new LinkedHashMap<>(reasons);
        unfinishedReasons.forEach((k, v) -> { if (why.size() < REASONS_KEPT) why.put(k, v); });
        return new SimulationResult(policy, placement, trace, (int) (totalMilli / 1000), done, rejected, unfinished, timeLimited, timeouts,
                preemptions, rounds,
                statsMs(jctS), statsMs(waitS), stats(slow), makespanMs / 1000.0, util, frag, FairnessWindows.overall(fw),
                tenantResults(), timeline(), cdf(jctS), fw, why, energy());
    }

    /** Energy and power-down figures up to the last finish (all zero when no job completed). */
    private SimulationResult.Energy energy() {
        PowerMeter.Snapshot p = powerAtLastFinish;
        SimulationResult.PowerDownResult down = null;
        if (powerDown != null) {
            down = new SimulationResult.PowerDownResult(powerDown, p.asleepNodeMs() / 3.6e6, p.wakeups(), p.wakeWaitMs() / 1000.0,
                    done == 0 ? 0 : p.wakeWaitMs() / 1000.0 / done, p.jobsWaitedForWake(),
                    p.poweredMilliMs() <= 0 ? 0 : usedIntegralAtLastFinish / p.poweredMilliMs(),
                    p.poweredNodeMs() <= 0 ? 0 : p.busyNodeMs() / p.poweredNodeMs());
        }
        return new SimulationResult.Energy(p.totalJ() / 3.6e6, (p.totalJ() - p.jobsJ()) / 3.6e6, down);
    }

    private List<SimulationResult.TenantResult> tenantResults() {
        double gpuTotal = 0, fairTotal = 0;
        for (int t = 0; t < tenantNames.size(); t++) {
            gpuTotal += tenantGpuMs[t];
            fairTotal += tenantFairContended[t];
        }
        List<SimulationResult.TenantResult> out = new ArrayList<>();
        for (int t = 0; t < tenantNames.size(); t++) {
            out.add(new SimulationResult.TenantResult(tenantNames.get(t), weight[t], tenantJobs[t], tenantGpuMs[t] / 3.6e6,
                    gpuTotal == 0 ? 0 : tenantGpuMs[t] / gpuTotal,
                    fairTotal == 0 ? 0 : tenantFairContended[t] / fairTotal,
                    tenantFairContended[t] == 0 ? 1 : tenantHeldContended[t] / tenantFairContended[t],
                    tenantJobs[t] == 0 ? 0 : tenantWaitMs[t] / tenantJobs[t] / 1000.0, tenantEnergyJ[t] / 3.6e6));
        }
        out.sort((a, b) -> Double.compare(b.gpuHours(), a.gpuHours()));
        return out;
    }

    private SimulationResult.Timeline timeline() {
        int n = tenantNames.size();
        double[][] tg = new double[n][], tf = new double[n][];
        for (int t = 0; t < n; t++) {
            tg[t] = series.averages(TENANT_BASE + 2 * t);
            tf[t] = series.averages(TENANT_BASE + 2 * t + 1);
        }
        return new SimulationResult.Timeline(series.widthMs() / 1000.0, series.averages(Q_QUEUED), series.averages(Q_USED),
                series.averages(Q_FRAG), List.copyOf(tenantNames), tg, tf);
    }

    private static SimulationResult.Stats statsMs(long[] sorted) {
        double[] s = new double[sorted.length];
        for (int i = 0; i < s.length; i++) s[i] = sorted[i] / 1000.0;
        return stats(s);
    }

    private static SimulationResult.Stats stats(double[] sorted) {
        if (sorted.length == 0) return SimulationResult.Stats.EMPTY;
        double sum = 0;
        for (double v : sorted) sum += v;
        return new SimulationResult.Stats(sum / sorted.length, percentile(sorted, 50), percentile(sorted, 95),
                percentile(sorted, 99), sorted[sorted.length - 1]);
    }

    /** Nearest-rank percentile of a sorted array (p in 0..100). */
    public static double percentile(double[] sorted, double p) {
        if (sorted.length == 0) return 0;
        int rank = (int) Math.ceil(p / 100.0 * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
    }

    private static double[] cdf(long[] sortedMs) {
        if (sortedMs.length == 0) return new double[0];
        double[] s = new double[sortedMs.length];
        for (int i = 0; i < s.length; i++) s[i] = sortedMs[i] / 1000.0;
        double[] out = new double[CDF_POINTS];
        for (int k = 0; k < CDF_POINTS; k++) out[k] = percentile(s, 100.0 * (k + 1) / CDF_POINTS);
        return out;
    }
}
