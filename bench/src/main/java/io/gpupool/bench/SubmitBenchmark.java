package io.gpupool.bench;

import io.gpupool.engine.Scheduler;
import io.gpupool.engine.SchedulerConfig;
import io.gpupool.engine.SubmitResult;
import io.gpupool.model.JobSpec;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * {@code Scheduler.submit} on the benchmark pool: admission (duplicate id, feasibility on the empty
 * pool), queueing, and the workload profile update. Each submitted job is cancelled right away so the
 * queue stays at its initial 10,000 pending jobs; the cancel is part of the timed operation.
 */
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
public class SubmitBenchmark extends PoolSizeBenchmark {
    private Scheduler scheduler;
    private JobStream stream;

    @Setup
    public void setUp() {
        scheduler = new Scheduler(BenchCluster.build(nodes), SchedulerConfig.defaults("fcfs"));
        stream = new JobStream(11, "s");
        for (int i = 0; i < SteadyPool.DEFAULT_PENDING; i++) scheduler.submit(stream.next(0), 0);
    }

    /** One submit (plus the cancel that keeps the queue size fixed). */
    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public SubmitResult submit() {
        JobSpec j = stream.next(0);
        SubmitResult r = scheduler.submit(j, 0);
        scheduler.cancel(j.id(), 0);
        return r;
    }
}
