package io.gpupool.bench;

import io.gpupool.engine.placement.PlacementResult;
import io.gpupool.model.JobSpec;

import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Where the time of {@link PlacementBenchmark}'s decisions goes, by job kind and outcome: runs the same
 * {@link SteadyPool} without JMH and times every decision with {@code System.nanoTime()}, or with
 * {@code --clock cpu} by the benchmark thread's own CPU time (ThreadMXBean): wall-clock percentiles on
 * shared, busy cores measure the OS scheduler as much as the engine (a thread that is descheduled for 4 ms
 * in 1% of decisions shows a p99 of 4 ms), CPU-time percentiles measure only the work of the decision, plus
 * the cost of one clock reading (printed; about 2 us in a Firecracker VM, where it is a system call).
 * Throughput comes from a separate run of the same number of decisions with no per-decision timing:
 * decisions per wall-clock second and per CPU-second of the thread (the latter steady under load).
 *
 * <pre>java -cp bench/target/benchmarks.jar io.gpupool.bench.DecisionProfile [nodes...] [--placement P] [--decisions N] [--clock wall|cpu]</pre>
 */
public final class DecisionProfile {
    private DecisionProfile() {}

    public static void main(String[] args) {
        String placement = "binpack,topology";
        int decisions = 400_000;
        boolean cpuClock = false;
        java.util.List<Integer> sizes = new java.util.ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--placement" -> placement = args[++i];
                case "--decisions" -> decisions = Integer.parseInt(args[++i]);
                case "--clock" -> cpuClock = switch (args[++i]) {
                    case "cpu" -> true;
                    case "wall" -> false;
                    default -> throw new IllegalArgumentException("--clock must be wall or cpu, got " + args[i]);
                };
                default -> sizes.add(Integer.parseInt(args[i]));
            }
        }
        if (sizes.isEmpty()) sizes = java.util.List.of(1000, 5000, 20000);
        for (int nodes : sizes) run(nodes, placement, decisions, cpuClock);
    }

    static void run(int nodes, String placement, int decisions, boolean cpuClock) {
        long t0 = System.nanoTime();
        SteadyPool pool = new SteadyPool(nodes, placement, SteadyPool.DEFAULT_PENDING, SteadyPool.DEFAULT_UTILISATION, 42);
        long setupMs = (System.nanoTime() - t0) / 1_000_000;
        // JIT warm-up on the same pool
        for (int i = 0; i < decisions / 2; i++) pool.decide();
        Map<String, long[]> byKind = new TreeMap<>();
        Map<String, String> firstReason = new TreeMap<>();
        Map<String, Integer> counts = new TreeMap<>();
        long[] all = new long[decisions];
        java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        for (int i = 0; i < decisions; i++) {
            JobSpec job = pool.peek();
            long a = cpuClock ? threads.getCurrentThreadCpuTime() : System.nanoTime();
            PlacementResult r = pool.decide();
            long ns = (cpuClock ? threads.getCurrentThreadCpuTime() : System.nanoTime()) - a;
            all[i] = ns;
            String k = kind(job) + (r.ok() ? " placed" : " FAILED");
            long[] arr = byKind.computeIfAbsent(k, x -> new long[decisions]);
            int c = counts.merge(k, 1, Integer::sum);
            arr[c - 1] = ns;
            if (!r.ok()) firstReason.putIfAbsent(kind(job), r.reason());
        }
        // the same number of decisions again, untimed one by one: throughput without the clock readings
        long cpuPlain = threads.getCurrentThreadCpuTime();
        long plainStart = System.nanoTime();
        for (int i = 0; i < decisions; i++) pool.decide();
        double secs = (System.nanoTime() - plainStart) / 1e9;
        double cpuSecs = (threads.getCurrentThreadCpuTime() - cpuPlain) / 1e9;
        long clockNs = cpuClock ? clockReadingNs(threads) : 0;
        System.out.printf(Locale.ROOT, "%n== %d nodes, placement %s: setup %d ms, %d decisions in %.2f s = %.0f decisions/s"
                        + " (%.0f per CPU-second of this thread), utilisation %.3f, %d live allocations; times below: %s%n",
                nodes, placement, setupMs, decisions, secs, decisions / secs, decisions / cpuSecs, pool.utilisation(), pool.liveAllocations(),
                cpuClock ? "thread CPU time, including one clock reading of " + clockNs + " ns" : "wall clock");
        // throughput per window of 10,000 decisions: shows phases where decisions get slow
        int window = 10_000;
        StringBuilder ws = new StringBuilder("  decisions/s per 10k-decision window:");
        for (int w = 0; w + window <= decisions; w += window) {
            long sum = 0;
            for (int i = w; i < w + window; i++) sum += all[i];
            ws.append(' ').append(Math.round(window / (sum / 1e9) / 1000)).append('k');
        }
        System.out.println(ws);
        long totalNs = 0;
        for (long x : all) totalNs += x;
        System.out.println(line("all", all, decisions, decisions, totalNs));
        for (var e : byKind.entrySet()) {
            int c = counts.get(e.getKey());
            System.out.println(line(e.getKey(), e.getValue(), c, decisions, totalNs));
        }

        // what the capacity index holds at the end: nodes per model with all GPUs free
        Map<String, int[]> idle = new TreeMap<>();
        for (var n : pool.cluster().nodes()) {
            int[] c = idle.computeIfAbsent(n.model().id(), x -> new int[2]);
            c[1]++;
            if (n.fullyFreeGpus() == n.gpuCount()) c[0]++;
        }
        StringBuilder sb = new StringBuilder("  nodes with every GPU free, by model:");
        idle.forEach((m, c) -> sb.append(' ').append(m).append(' ').append(c[0]).append('/').append(c[1]));
        System.out.println(sb);
        firstReason.forEach((k, why) -> System.out.println("  first failure of " + k + ": " + why));
    }

    /** CPU time one reading of the thread's CPU clock costs, measured over 100,000 readings. */
    static long clockReadingNs(java.lang.management.ThreadMXBean threads) {
        long sink = 0;
        long c0 = threads.getCurrentThreadCpuTime();
        for (int i = 0; i < 100_000; i++) sink += threads.getCurrentThreadCpuTime();
        long c1 = threads.getCurrentThreadCpuTime();
        return sink == 42 ? -1 : (c1 - c0) / 100_000;
    }

    static String kind(JobSpec j) {
        String k = j.share().isWhole() ? j.shape().toString() : (j.share().memoryMib() > 0 ? "frac+mem" : "frac");
        if (j.requireNvlink()) k += " nvlink";
        if (!j.allowedModels().isEmpty()) k += " models";
        return k;
    }

    static String line(String name, long[] ns, int n, int total, long totalNs) {
        long[] v = Arrays.copyOf(ns, n);
        Arrays.sort(v);
        double sum = 0;
        for (long x : v) sum += x;
        return String.format(Locale.ROOT, "  %-22s n=%7d (%5.1f%%)  mean %7.1f us  p50 %7.1f  p99 %8.1f  max %9.1f  share of time %5.1f%%",
                name, n, 100.0 * n / total, sum / n / 1e3, pct(v, 0.50) / 1e3, pct(v, 0.99) / 1e3, v[n - 1] / 1e3, 100.0 * sum / totalNs);
    }

    static double pct(long[] sorted, double p) {
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p * sorted.length) - 1)];
    }
}
