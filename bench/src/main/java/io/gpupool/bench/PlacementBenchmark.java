package io.gpupool.bench;

import io.gpupool.engine.placement.PlacementResult;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import java.util.concurrent.TimeUnit;

/**
 * Placement decisions per second on a heterogeneous pool (five GPU models, 8-GPU nodes) held at 75%
 * utilisation, with 10,000 pending jobs of which 30% are fractional. See {@link SteadyPool} for the
 * workload and docs/benchmarks.md for results.
 *
 * <p>One operation is one placement decision (filter -> score -> bind of one job, as
 * {@code Scheduler.schedule} does it), placed or not. {@link #decisions} runs in {@code Throughput}
 * mode (decisions/s, with auxiliary counters {@code placed} and {@code failed} splitting them by
 * outcome); {@link #latency} runs the same operation in {@code SampleTime} mode for the latency
 * distribution (p50/p99 per decision, in microseconds). Each gets its own freshly built pool.
 */
public class PlacementBenchmark extends PoolSizeBenchmark {
    /**
     * A {@code --placement} value with {@code +} for the comma (JMH's {@code -p} splits values on
     * commas): {@code binpack+topology} is the default {@code binpack,topology}.
     */
    @Param({"binpack+topology", "fgd"})
    public String placement;

    private SteadyPool pool;

    /** Decisions split by outcome, reported per second next to the primary result. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Outcomes {
        public long placed;
        public long failed;

        @Setup(Level.Iteration)
        public void reset() {
            placed = 0;
            failed = 0;
        }
    }

    @Setup(Level.Trial)
    public void setUp() {
        pool = new SteadyPool(nodes, placement, SteadyPool.DEFAULT_PENDING, SteadyPool.DEFAULT_UTILISATION, 42);
    }

    /** Decisions per second. */
    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    public PlacementResult decisions(Outcomes out) {
        PlacementResult r = pool.decide();
        if (r.ok()) out.placed++;
        else out.failed++;
        return r;
    }

    /** Time per decision, sampled: JMH prints p0.50, p0.90, p0.99, p0.999 and the maximum. */
    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public PlacementResult latency() {
        return pool.decide();
    }
}
