package io.gpupool.bench;

import io.gpupool.engine.JobState;
import io.gpupool.engine.JobStatus;
import io.gpupool.engine.RoundResult;
import io.gpupool.engine.Scheduler;
import io.gpupool.engine.SchedulerConfig;
import io.gpupool.engine.SubmitResult;
import io.gpupool.model.ClusterSpecs;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.JobSpec;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.util.HashMap;
import java.util.Iterator;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The cost of one scheduling round, {@code schedule(now)}, for each policy at 10,000 pending jobs on a full
 * pool, after the one event that sets off a round in a replay or in the service (issue 16, must-show 3).
 * Only the engine's public API is used (Scheduler, SchedulerConfig, JobSpec, ClusterSpecs).
 *
 * <p><b>State.</b> A {@code 64x8:V100-32GB} pool is first filled with running jobs of {@link MixedJobs}'s mixed
 * shapes (one at a time: submitted, started if it fits, else withdrawn, until 200 in a row do not fit), then
 * 10,000 mixed jobs are queued and rounds run until the queue is back at 10,000 after a round: what fits (as
 * far as the policy lets it start) has started, the rest waits. So most pending jobs fit nowhere and a few
 * would fit but wait behind the policy's order.
 *
 * <p><b>The measured round</b> (everything else happens in the untimed per-invocation set-up; the clock
 * advances 10 s per invocation, so waits, aging and attained service grow as in a replay):
 * <ul>
 *   <li>{@code event=completion}: one running job, drawn at random, completes, and a fresh job of the same
 *       shape, tenant and priority arrives; the round must look at the queue again, since capacity grew. The
 *       running set, the queue length and the mix stay in a steady state: each invocation frees one job's
 *       GPUs and queues one job like it. The round may start jobs (and, under {@code las} and
 *       {@code srtf-oracle}, preempt): that work is part of its cost.</li>
 *   <li>{@code event=arrival}: only one job arrives (a fresh draw from the mix) since the last round. To stay
 *       in a steady state, the previous invocation's arrival is withdrawn first (cancelled if still pending;
 *       if it had started, it completes and one untimed round absorbs that), so the round sees one
 *       cancellation and one arrival and no capacity change in most invocations.</li>
 * </ul>
 * Mode: average time per round. Auxiliary counters per iteration: rounds, jobs started and preempted by the
 * measured rounds. At the end of a trial the pool's use and the queue length are printed (the state must
 * still be "full, 10,000 queued").
 *
 * <pre>java -jar bench/target/benchmarks.jar PolicyRoundBenchmark -f 1 -wi 3 -w 2s -i 5 -r 2s</pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
public class PolicyRoundBenchmark {
    @Param({"fcfs", "fcfs-backfill", "priority", "fair-share", "qssf", "las", "srtf-oracle", "themis", "gittins"})
    public String policy;

    @Param({"completion", "arrival"})
    public String event;

    @Param({"10000"})
    public int pending;

    @Param({"64x8:V100-32GB"})
    public String cluster;

    private static final long STEP_MS = 10_000;
    private static final int FILL_MISSES = 200;

    private Scheduler scheduler;
    private MixedJobs jobs;
    private final Map<String, Long> runtimes = new HashMap<>();
    private long now;
    private String arrived;
    private long settleRounds;

    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Counts {
        public long rounds;
        public long started;
        public long preempted;

        @Setup(Level.Iteration)
        public void reset() {
            rounds = 0;
            started = 0;
            preempted = 0;
        }
    }

    @Setup(Level.Trial)
    public void setUp() {
        scheduler = new Scheduler(ClusterSpecs.parse(cluster, GpuCatalog.standard()), SchedulerConfig.defaults(policy),
                id -> runtimes.get(id));
        jobs = new MixedJobs(16, "j");
        fill();
        for (int i = 0; i < 20 && scheduler.pendingJobs().size() < pending; i++) {
            while (scheduler.pendingJobs().size() < pending) submit(jobs.next(now));
            scheduler.schedule(now);
        }
        if (scheduler.pendingJobs().size() < pending) throw new IllegalStateException("queue did not settle: " + describe());
    }

    /** Running jobs of mixed shapes until the pool is full: each is started alone or withdrawn. */
    private void fill() {
        int misses = 0;
        while (misses < FILL_MISSES) {
            JobSpec j = jobs.next(now);
            submit(j);
            if (scheduler.schedule(now).started().contains(j.id())) {
                misses = 0;
            } else {
                withdraw(j.id());
                misses++;
            }
        }
    }

    @Setup(Level.Invocation)
    public void event() {
        now += STEP_MS;
        if (event.equals("completion")) {
            JobState done = randomRunning();
            finish(done.id());
            submit(jobs.like(done.spec(), now));
        } else {
            JobState last = arrived == null ? null : scheduler.job(arrived);
            if (last != null) {
                if (last.status() == JobStatus.RUNNING) {
                    finish(arrived);
                    scheduler.schedule(now);
                    settleRounds++;
                } else {
                    withdraw(arrived);
                }
            }
            JobSpec j = jobs.next(now);
            submit(j);
            arrived = j.id();
        }
    }

    /** One scheduling round after the event. */
    @Benchmark
    public RoundResult round(Counts c) {
        RoundResult r = scheduler.schedule(now);
        c.rounds++;
        c.started += r.started().size();
        c.preempted += r.preempted().size();
        return r;
    }

    @TearDown(Level.Trial)
    public void report() {
        System.out.println();
        System.out.println("state after the trial: " + describe() + (event.equals("arrival") ? ", untimed rounds after a started arrival: " + settleRounds : ""));
    }

    private String describe() {
        return String.format(Locale.ROOT, "pool %.1f%% used, %d running, %d pending", 100.0 * scheduler.cluster().usedMilli() / scheduler.cluster().totalMilli(),
                scheduler.runningJobs().size(), scheduler.pendingJobs().size());
    }

    private void submit(JobSpec j) {
        runtimes.put(j.id(), jobs.runtimeMs());
        SubmitResult r = scheduler.submit(j, now);
        if (!r.accepted()) throw new IllegalStateException("refused at submit: " + r);
    }

    private void finish(String id) {
        scheduler.complete(id, now);
        scheduler.forget(id);
        runtimes.remove(id);
    }

    private void withdraw(String id) {
        scheduler.cancel(id, now);
        scheduler.forget(id);
        runtimes.remove(id);
    }

    private JobState randomRunning() {
        int k = jobs.nextInt(scheduler.runningJobs().size());
        Iterator<JobState> it = scheduler.runningJobs().iterator();
        for (int i = 0; i < k; i++) it.next();
        return it.next();
    }
}
