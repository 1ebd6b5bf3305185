package io.gpupool.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.Locale;

/**
 * {@link SchedulerRoundBenchmark}'s rounds without JMH, timed by the thread's own CPU time as well as the
 * wall clock: on shared, busy cores the wall-clock time of a round includes the time the thread waited for a
 * core, its CPU time does not. Same set-up (pool, 10,000 pending jobs, 50 rounds of churn), then warm-up
 * rounds, then measured rounds, each after {@code churn} completions and arrivals (not timed).
 *
 * <pre>java -cp bench/target/benchmarks.jar io.gpupool.bench.RoundProfile NODES POLICY[,POLICY...] [--rounds N] [--warmup N]</pre>
 */
public final class RoundProfile {
    private RoundProfile() {}

    public static void main(String[] args) {
        if (args.length < 2) throw new IllegalArgumentException("usage: RoundProfile NODES POLICY[,POLICY...] [--rounds N] [--warmup N]");
        int nodes = Integer.parseInt(args[0]);
        int rounds = 60;
        int warmup = 30;
        for (int i = 2; i < args.length; i++) {
            switch (args[i]) {
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--warmup" -> warmup = Integer.parseInt(args[++i]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        for (String policy : args[1].split(",")) run(nodes, policy, rounds, warmup);
    }

    static void run(int nodes, String policy, int rounds, int warmup) {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        SchedulerRoundBenchmark b = new SchedulerRoundBenchmark();
        b.nodes = nodes;
        b.policy = policy;
        b.churn = 100;
        long setupStart = System.nanoTime();
        b.setUp();
        long setupMs = (System.nanoTime() - setupStart) / 1_000_000;
        SchedulerRoundBenchmark.Started started = new SchedulerRoundBenchmark.Started();
        for (int i = 0; i < warmup; i++) {
            b.churn();
            b.round(started);
        }
        started.reset();
        long[] cpu = new long[rounds];
        long[] wall = new long[rounds];
        for (int i = 0; i < rounds; i++) {
            b.churn();
            long c0 = threads.getCurrentThreadCpuTime();
            long w0 = System.nanoTime();
            b.round(started);
            wall[i] = System.nanoTime() - w0;
            cpu[i] = threads.getCurrentThreadCpuTime() - c0;
        }
        System.out.printf(Locale.ROOT, "%-14s nodes %6d  CPU per round: mean %8.2f ms  p50 %8.2f  max %8.2f   wall: mean %8.2f ms  p50 %8.2f   started/round %6.1f   setup %d ms%n",
                policy, nodes, mean(cpu) / 1e6, pct(cpu, 0.5) / 1e6, pct(cpu, 1.0) / 1e6, mean(wall) / 1e6, pct(wall, 0.5) / 1e6,
                started.started / (double) rounds, setupMs);
    }

    static double mean(long[] v) {
        return Arrays.stream(v).average().orElse(0);
    }

    static double pct(long[] v, double p) {
        long[] s = v.clone();
        Arrays.sort(s);
        return s[Math.min(s.length - 1, Math.max(0, (int) Math.ceil(p * s.length) - 1))];
    }
}
