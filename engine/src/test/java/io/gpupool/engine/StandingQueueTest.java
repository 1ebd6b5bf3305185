package io.gpupool.engine;

import io.gpupool.engine.policy.CompletionObserver;
import io.gpupool.engine.policy.JobQueue;
import io.gpupool.engine.policy.LasPolicy;
import io.gpupool.engine.policy.PolicyContext;
import io.gpupool.engine.policy.PolicyRegistry;
import io.gpupool.engine.policy.PriorityAgingPolicy;
import io.gpupool.engine.policy.QueuePolicy;
import io.gpupool.engine.policy.StandingOrder;
import io.gpupool.engine.policy.StandingQueue;
import io.gpupool.model.ClusterSpec;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static io.gpupool.engine.TestPools.A100;
import static io.gpupool.engine.TestPools.job;
import static io.gpupool.engine.TestPools.pool;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The standing queue polls jobs in exactly the order the policy's per-round queue would, through
 * arrivals, starts, cancellations and preemptions within a round, for every policy that has a standing order
 * (and through the re-sorts of a policy whose order changes as it learns from finished jobs).
 */
class StandingQueueTest {
    private static final ClusterSpec POOL = pool(1, 8, A100);

    @Test
    void pollsInThePerRoundOrderForEveryPolicyWithAStandingOrder() {
        List<String> compared = new ArrayList<>();
        for (String name : PolicyRegistry.names()) {
            SchedulerConfig config = SchedulerConfig.defaults(name);
            if (name.equals("las")) config = config.withPolicyArgs(new LasPolicy.Args(List.of(50.0, 500.0)));
            QueuePolicy policy = PolicyRegistry.create(name, config.policyArgs());
            // a policy without a standing order is sorted every round: nothing to compare
            for (long seed = 1; seed <= 30 && compare(name, config, policy, seed); seed++) {
                if (seed == 1) compared.add(name);
            }
        }
        assertThat(compared).containsExactlyInAnyOrder("fcfs", "fcfs-backfill", "las", "priority", "srtf-oracle", "gittins");
    }

    /** Random rounds; false when the policy keeps no standing order. */
    private boolean compare(String name, SchedulerConfig config, QueuePolicy any, long seed) {
        if (!(any instanceof StandingOrder policy)) return false;
        SplittableRandom rnd = new SplittableRandom(seed);
        Map<String, Long> runtimes = new LinkedHashMap<>();
        PolicyContext ctx0 = new PolicyContext(0, config, new io.gpupool.engine.state.ClusterState(POOL), null,
                new io.gpupool.engine.policy.HistoryMedianPredictor(3_600_000), runtimes::get, List.of());
        StandingQueue standing = new StandingQueue(policy, ctx0, StandingQueue.linesByShape(any.traits()));
        JobState.RoundNote note = new JobState.RoundNote();
        List<JobState> pending = new ArrayList<>();
        long now = 0, seq = 0;
        for (int round = 0; round < 40; round++) {
            now += rnd.nextInt(1, 100) * 1000L;
            for (int k = rnd.nextInt(0, 6); k > 0; k--) {
                // submit times collide often, so ties (broken by arrival order) are exercised
                JobState j = new JobState(job("j" + seq, 1 + rnd.nextInt(4)).submitMs(now - rnd.nextInt(3) * 1000L)
                        .priority(rnd.nextInt(3)).build(), seq++, now, note);
                j.attainedBeforeMs = rnd.nextInt(4) * 30_000L;   // requeued jobs carry attained service (LAS queues)
                j.waitedMs = j.waitedBeforeQueueMs = rnd.nextInt(4) * 1_800_000L;   // and time waited before (priority's aging)
                runtimes.put(j.id(), 1000L * rnd.nextInt(1, 1000));
                pending.add(j);
                standing.add(j);
            }
            if (!pending.isEmpty() && rnd.nextInt(4) == 0) {   // a cancellation between rounds
                JobState gone = pending.remove(rnd.nextInt(pending.size()));
                standing.remove(gone);
            }
            if (policy instanceof CompletionObserver learner) {
                // jobs finish elsewhere in the pool: gittins re-learns its indexes and the standing queue re-sorts
                for (int k = rnd.nextInt(0, 12); k > 0; k--) {
                    JobState done = new JobState(job("done" + seq, 1 + rnd.nextInt(4)).build(), seq++, now, note);
                    done.attainedBeforeMs = 1000L * (1 + rnd.nextInt(400));
                    learner.jobFinished(done, now);
                }
            }
            PolicyContext ctx = new PolicyContext(now, config, ctx0.cluster(), null, ctx0.predictor(), runtimes::get, List.of());
            JobQueue expected = perRoundOrder(name, policy, ctx, new ArrayList<>(pending));
            JobQueue actual = standing.round(ctx);
            // poll both; start some jobs, and requeue one started job as if preempted in the same round
            JobState requeued = null;
            while (true) {
                JobState e = expected.poll(), a = actual.poll();
                assertThat(a).as("%s seed %d round %d", name, seed, round).isSameAs(e);
                if (a == null) break;
                if (a.status != JobStatus.PENDING) continue;
                if (rnd.nextInt(3) == 0) {
                    a.status = JobStatus.RUNNING;
                    a.waitedMs += now - a.queuedSinceMs;   // as Scheduler.start does, while the standing queue still holds it
                    pending.remove(a);
                    standing.remove(a);
                    if (requeued == null && rnd.nextInt(3) == 0) {
                        requeued = a;
                        // preempted at the instant it started: its attained service, hence its key, is unchanged
                        a.status = JobStatus.PENDING;
                        a.queuedSinceMs = now;
                        a.waitedBeforeQueueMs = a.waitedMs;
                        pending.add(a);
                        standing.add(a);
                        expected.requeue(a);
                        actual.requeue(a);
                    }
                }
            }
            standing.endRound();
            assertThat(standing.size()).isEqualTo(pending.size());
        }
        return true;
    }

    /**
     * The order each round would give by sorting: the policy's own queue, except priority, whose standing order
     * replaced a sort by the aged wait at the round's time ({@link PriorityAgingPolicy#agedWaitMs}).
     */
    private static JobQueue perRoundOrder(String name, StandingOrder policy, PolicyContext ctx, List<JobState> pending) {
        if (!name.equals("priority")) return policy.queue(ctx, pending);
        double rate = PriorityAgingPolicy.Args.DEFAULTS.agingPerHour();
        return JobQueue.sorted(pending, java.util.Comparator.comparingLong((JobState j) -> -PriorityAgingPolicy.agedWaitMs(j, ctx.nowMs(), rate)));
    }
}
