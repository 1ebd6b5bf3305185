package io.gpupool.bench;

import io.gpupool.engine.JobState;
import io.gpupool.engine.RoundResult;
import io.gpupool.engine.Scheduler;
import io.gpupool.engine.SchedulerConfig;
import io.gpupool.engine.SubmitResult;
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

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Whole scheduling rounds through {@link Scheduler#schedule}, the way the service and the simulator
 * drive the engine: the same pool and job mix as {@link PlacementBenchmark}, 10,000 pending jobs.
 *
 * <p>Before each round (not timed) the {@code churn} longest-running jobs complete and as many new jobs
 * arrive, so the pending queue stays at 10,000 and the pool stays as full as the policy can keep it; the
 * timed operation is one {@code schedule(now)}: ordering the 10,000 pending jobs, placing what fits,
 * and (fcfs-backfill) the reservation for the blocked head and the backfill pass behind it.
 * The auxiliary counter {@code started} gives jobs started per second of round time.
 *
 * <p>{@link SubmitBenchmark} times the arrivals themselves.
 */
public class SchedulerRoundBenchmark extends PoolSizeBenchmark {
    @Param({"fcfs-backfill"})
    public String policy;

    /** Jobs that complete (and arrive) between two rounds. */
    @Param({"100"})
    public int churn;

    private Scheduler scheduler;
    private JobStream stream;
    private long now;
    private final List<String> done = new ArrayList<>();

    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Started {
        public long started;

        @Setup(Level.Iteration)
        public void reset() {
            started = 0;
        }
    }

    @Setup(Level.Trial)
    public void setUp() {
        scheduler = new Scheduler(BenchCluster.build(nodes), SchedulerConfig.defaults(policy));
        stream = new JobStream(7, "r");
        refill();
        // fill the pool, then churn until the running set is well mixed
        for (int i = 0; i < 50; i++) {
            churn();
            scheduler.schedule(now);
        }
    }

    private void refill() {
        while (scheduler.pendingJobs().size() < SteadyPool.DEFAULT_PENDING) {
            SubmitResult r = scheduler.submit(stream.next(now), now);
            if (!r.accepted()) throw new IllegalStateException(r.toString());
        }
    }

    /** Completes the {@code churn} jobs that have run longest, lets new ones arrive, advances the clock. */
    @Setup(Level.Invocation)
    public void churn() {
        now += 10_000;
        done.clear();
        Iterator<JobState> it = scheduler.runningJobs().iterator();
        while (done.size() < churn && it.hasNext()) done.add(it.next().id());
        for (String id : done) scheduler.complete(id, now);
        refill();
    }

    /** One scheduling round. */
    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    public RoundResult round(Started s) {
        RoundResult r = scheduler.schedule(now);
        s.started += r.started().size();
        return r;
    }
}
