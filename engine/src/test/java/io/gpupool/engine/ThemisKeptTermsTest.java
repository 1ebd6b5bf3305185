package io.gpupool.engine;

import io.gpupool.engine.policy.HistoryMedianPredictor;
import io.gpupool.engine.policy.JobQueue;
import io.gpupool.engine.policy.PolicyContext;
import io.gpupool.engine.policy.PolicyRegistry;
import io.gpupool.engine.policy.RuntimePredictor;
import io.gpupool.engine.policy.ThemisPolicy;
import io.gpupool.engine.state.ClusterState;
import io.gpupool.model.JobSpec;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;

import static io.gpupool.engine.TestPools.A100;
import static io.gpupool.engine.TestPools.job;
import static io.gpupool.engine.TestPools.pool;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * themis' queue from the terms it keeps across rounds (told of every job entering and leaving the queue, predictions
 * read again only where the predictor says they may have changed) polls in exactly the order of rho computed afresh
 * from each job and the predictor's answer now: over random histories of arrivals, starts (also during a round's walk),
 * requeues of preempted jobs with attained run time, replaced specs, completions the history predictor learns from
 * (users and names shared, some jobs with estimates or time limits) and a change of predictor. Submit times collide, so
 * ties to arrival order are exercised. If a learned history did not make its jobs' predictions be read again, the
 * stale predictions would give another order. Long queues with long gaps between rounds move the order far, so the
 * queue's sort from the last round's order gives up its insertions for a full sort; a queue too long to sort whole goes
 * through a heap, and sorts again from what that left once it is shorter.
 */
class ThemisKeptTermsTest {
    private static final ClusterState CLUSTER = new ClusterState(pool(2, 8, A100));

    @Test
    void theKeptQueueIsTheOrderOfRhoComputedAfresh() {
        for (long seed = 1; seed <= 63; seed++) {
            SplittableRandom rnd = new SplittableRandom(seed);
            // seeds past 40: long queues and long gaps between rounds, so the order moves far from one round to the next;
            // past 60: a queue longer than themis sorts whole (a heap per round), shrinking below that as jobs start
            boolean longQueues = seed > 40, overSorted = seed > 60;
            ThemisPolicy policy = (ThemisPolicy) PolicyRegistry.create("themis");
            RuntimePredictor predictor = new HistoryMedianPredictor(3_600_000);
            JobState.RoundNote note = new JobState.RoundNote();
            List<JobState> pending = new ArrayList<>(), running = new ArrayList<>();
            long now = 0, seq = 0;
            for (int round = 0; round < 60; round++) {
                now += rnd.nextInt(1, 100) * (longQueues && rnd.nextInt(4) == 0 ? 1000_000L : 1000L);
                int arrivals = overSorted && round == 0 ? ThemisPolicy.SORTED_QUEUE_UP_TO + 100 : rnd.nextInt(0, longQueues ? 16 : 6);
                for (int k = arrivals; k > 0; k--) {
                    JobState j = new JobState(spec("j" + seq, rnd, now), seq++, now, note);
                    pending.add(j);
                    policy.queued(j);
                }
                if (!pending.isEmpty() && rnd.nextInt(5) == 0) {   // a spec replaced while queued: a new state, same place
                    int at = rnd.nextInt(pending.size());
                    JobState old = pending.get(at);
                    JobState fresh = old.replacedBy(spec(old.id(), rnd, old.spec().submitTimeMs()));
                    pending.set(at, fresh);
                    policy.dequeued(old);
                    policy.queued(fresh);
                }
                if (!running.isEmpty() && rnd.nextInt(3) == 0) {   // a preemption: back in the queue with its run time
                    JobState j = running.remove(rnd.nextInt(running.size()));
                    j.attainedBeforeMs += now - j.runStartMs;
                    j.runStartMs = -1;
                    j.status = JobStatus.PENDING;
                    pending.add(j);
                    policy.queued(j);
                }
                for (int k = rnd.nextInt(0, 4); k > 0 && !running.isEmpty(); k--) {   // completions the predictor learns from
                    JobState done = running.remove(rnd.nextInt(running.size()));
                    done.status = JobStatus.COMPLETED;
                    predictor.observe(done.spec(), rnd.nextInt(10) == 0 ? 0 : now - done.runStartMs + done.attainedBeforeMs);
                }
                if (rnd.nextInt(30) == 0) predictor = new HistoryMedianPredictor(1_800_000);   // every view made again
                PolicyContext ctx = new PolicyContext(now, null, CLUSTER, null, predictor, null, List.copyOf(running));
                List<JobState> expected = afresh(ctx, pending, running.size());
                JobQueue queue = policy.queue(ctx, pending);
                for (JobState e : expected) {
                    JobState a = queue.poll();
                    assertThat(a).as("seed %d round %d", seed, round).isSameAs(e);
                    // it starts: the scheduler tells the policy during the walk (a queue too long to sort whole stays so
                    // for a few rounds, losing a few jobs in each, then shrinks)
                    int oneIn = overSorted ? (round < 5 ? 200 : 6) : longQueues ? 12 : 3;
                    if (rnd.nextInt(oneIn) == 0) {
                        a.status = JobStatus.RUNNING;
                        a.runStartMs = now;
                        pending.remove(a);
                        running.add(a);
                        policy.dequeued(a);
                    }
                }
                assertThat(queue.poll()).isNull();
            }
        }
    }

    /** A job whose user and name are shared with others, sometimes with an estimate or a time limit. */
    private static JobSpec spec(String id, SplittableRandom rnd, long now) {
        JobSpec.Builder b = job(id, 1 + rnd.nextInt(8)).submitMs(Math.max(0, now - rnd.nextInt(3) * 1000L))
                .user("u" + rnd.nextInt(4)).name("n" + rnd.nextInt(3));
        if (rnd.nextInt(5) == 0) b.estimateMs(1000L * rnd.nextInt(1, 3000));
        if (rnd.nextInt(5) == 0) b.timeLimitMs(1000L * rnd.nextInt(1, 3000));
        return b.build();
    }

    /** rho of every pending job from its state and the predictor's answer now, highest first, ties to arrival order. */
    private static List<JobState> afresh(PolicyContext ctx, List<JobState> pending, int runningCount) {
        int contending = pending.size() + runningCount;
        double poolGpus = ctx.cluster().totalMilli() / 1000.0;
        List<JobState> order = new ArrayList<>(pending);
        order.sort(Comparator.comparing((JobState j) -> -rho(ctx, j, contending, poolGpus), Double::compare).thenComparingLong(JobState::seq));
        return order;
    }

    private static double rho(PolicyContext ctx, JobState j, int contending, double poolGpus) {
        long runMs = ctx.predictor().predictMs(j.spec());
        if (j.spec().timeLimitMs().isPresent()) runMs = Math.min(runMs, j.spec().timeLimitMs().getAsLong());
        long remainingMs = Math.max(0, runMs - j.attainedMs(ctx.nowMs()));
        double shared = Math.max(0, ctx.nowMs() - j.spec().submitTimeMs()) + (double) remainingMs;
        double alone = runMs * Math.max(1.0, j.gpuUnits() * contending / poolGpus);
        return shared / alone;
    }
}
