package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;
import io.gpupool.engine.Scheduler;
import io.gpupool.engine.SchedulerConfig;
import io.gpupool.engine.TestPools;
import io.gpupool.model.JobSpec;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * las, gittins and srtf-oracle keep their running jobs in victim order across rounds ({@link RunningBands},
 * {@link RunningByFinish}), and las and gittins their next band crossing and the band or index of the first victim: over random histories (arrivals, rounds with preemptions, completions,
 * cancellations, an administrator's preemption, a reconfiguration, fractional GPUs and gangs, true run times that end
 * before the job does; for gittins, index tables that change as jobs finish) each must equal the plain computation at
 * every instant asked: the running jobs sorted by the policy's {@link Preemption#victimOrder}, and a scan of every
 * running job for its next crossing and its highest queue or lowest index. The instants include the crossings
 * themselves and the milliseconds around them, where a stored queue would first go stale. Each policy's
 * {@link Preemption#victimRanks} (a rank per victim of its list, a bound per job) must answer as its mayPreempt
 * for every pending or running job against every running one (gittins' kept ranks are the index itself), and gittins' standing order (one comparison) as the chain of comparators
 * it stands for.
 */
class StandingVictimOrderTest {

    @Test
    void lasKeepsItsVictimOrderAndNextCrossingExact() {
        SchedulerConfig config = SchedulerConfig.defaults("las").withPolicyArgs(new LasPolicy.Args(List.of(50.0, 500.0, 2000.0)));
        for (long seed = 1; seed <= 25; seed++) replay(config, seed);
    }

    @Test
    void gittinsKeepsItsVictimOrderNextCrossingAndLowestIndexExact() {
        // small levels and groups: jobs cross levels often, and the index table changes every 10 finished jobs
        SchedulerConfig config = SchedulerConfig.defaults("gittins").withPolicyArgs(new GittinsPolicy.Args(20, 2, "tenant-size", 3));
        for (long seed = 1; seed <= 25; seed++) replay(config, seed);
    }

    @Test
    void srtfOracleKeepsItsVictimOrderExact() {
        for (long seed = 1; seed <= 25; seed++) replay(SchedulerConfig.defaults("srtf-oracle"), seed);
    }

    private static void replay(SchedulerConfig config, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        Map<String, Long> trueRuntimes = new HashMap<>();
        RuntimeOracle oracle = trueRuntimes::get;
        Scheduler s = new Scheduler(TestPools.pool(4, 8, TestPools.A100), config, oracle);
        long now = 0;
        int next = 0;
        for (int step = 0; step < 150; step++) {
            String what = config.policy() + " seed " + seed + " step " + step;
            int op = rnd.nextInt(12);
            List<JobState> running = new ArrayList<>(s.runningJobs());
            // ranks made before a job stops or starts still hold after it, as in a round that preempts (op 8)
            PolicyContext before = new PolicyContext(now, s.config(), s.cluster(), s.ledger(), s.predictor(), oracle, s.runningJobs());
            Preemption rule = (Preemption) s.policy();
            List<JobState> listed = rule.runningInVictimOrder(before);
            Preemption.VictimRanks ranked = rule.victimRanks(before, listed);
            if (op < 5) {
                for (int k = rnd.nextInt(1, 4); k > 0; k--) {
                    JobSpec j = randomJob(rnd, "j" + next++, now);
                    trueRuntimes.put(j.id(), 1000L * rnd.nextInt(1, 400));
                    s.submit(j, now);
                }
            } else if (op < 8 && !running.isEmpty()) {
                s.complete(running.get(rnd.nextInt(running.size())).id(), now);
            } else if (op == 8 && !running.isEmpty()) {
                s.preempt(running.get(rnd.nextInt(running.size())).id(), now);
            } else if (op == 9 && !running.isEmpty()) {
                s.cancel(running.get(rnd.nextInt(running.size())).id(), now);
            } else if (op == 10 && step % 40 == 10) {
                s.reconfigure(config);   // a new policy object: told of the jobs already running
            }
            if (op == 8 && s.policy() == rule) {
                s.schedule(now);   // a round at the same instant: jobs may start, and stop for them
                for (JobState job : s.pendingJobs()) {
                    for (int i = 0; i < listed.size(); i++) {
                        assertThat(ranked.rankAt(i) < ranked.boundOf(job)).as(what + " after a preemption: " + job.id() + " may preempt " + listed.get(i).id())
                                .isEqualTo(rule.mayPreempt(before, job, listed.get(i)));
                    }
                }
            }
            s.schedule(now);
            check(s, oracle, now, what);
            // the next instant: often a crossing, or a millisecond either side of it, as a replay asks
            OptionalLong crossing = s.nextReevaluationMs(now);
            long later = now + 1000L * rnd.nextInt(0, 40);
            if (crossing.isPresent() && rnd.nextInt(3) > 0) later = Math.max(now, crossing.getAsLong() + rnd.nextInt(-1, 2));
            check(s, oracle, later, what + " at " + later);
            now = later;
        }
    }

    private static void check(Scheduler s, RuntimeOracle oracle, long now, String what) {
        PolicyContext ctx = new PolicyContext(now, s.config(), s.cluster(), s.ledger(), s.predictor(), oracle, s.runningJobs());
        Preemption policy = (Preemption) s.policy();
        List<JobState> sorted = new ArrayList<>(s.runningJobs());
        sorted.sort(policy.victimOrder(ctx));
        assertThat(policy.runningInVictimOrder(ctx)).as(what).containsExactlyElementsOf(sorted);
        // a round's planner ranks each victim of the list once: rank below the job's bound must be mayPreempt
        List<JobState> jobs = new ArrayList<>(s.pendingJobs());
        jobs.addAll(s.runningJobs());
        List<JobState> inVictimOrder = policy.runningInVictimOrder(ctx);
        Preemption.VictimRanks ranks = policy.victimRanks(ctx, inVictimOrder);
        for (JobState job : jobs) {
            double bound = ranks.boundOf(job);
            for (int i = 0; i < inVictimOrder.size(); i++) {
                JobState v = inVictimOrder.get(i);
                assertThat(ranks.rankAt(i) < bound).as(what + ": " + job.id() + " may preempt " + v.id()).isEqualTo(policy.mayPreempt(ctx, job, v));
            }
        }
        if (policy instanceof GittinsPolicy gittins) {   // the kept keys are the index itself
            for (int i = 0; i < inVictimOrder.size(); i++) assertThat(ranks.rankAt(i)).as(what).isEqualTo(gittins.indexNow(ctx, inVictimOrder.get(i)));
        }
        if (policy instanceof LasPolicy las) {
            assertThat(las.nextReevaluationMs(ctx)).as(what).isEqualTo(las.nextCrossingScanned(ctx));
            int highest = 0;
            for (JobState j : s.runningJobs()) highest = Math.max(highest, LasPolicy.queueOf(j, now, new double[] {50, 500, 2000}));
            las.standingOrder(ctx);
            assertThat(las.highestQueue).as(what).isEqualTo(highest);
        }
        if (policy instanceof GittinsPolicy gittins) {
            // the blocked job's kept index: first the job last asked for (in a round or a check), now later or with
            // another table, then every job twice (the second answer is the kept one), the running ones first: a
            // pending job is left kept, whose attained time stays while the table may change before the next check
            JobState last = gittins.indexedJob;
            if (last != null) assertThat(gittins.blockedIndex(ctx, last)).as(what + ": kept index of " + last.id()).isEqualTo(gittins.indexNow(ctx, last));
            for (JobState job : jobs.reversed()) {
                assertThat(gittins.blockedIndex(ctx, job)).as(what + ": index of " + job.id()).isEqualTo(gittins.indexNow(ctx, job));
                assertThat(gittins.blockedIndex(ctx, job)).as(what + ": index of " + job.id() + " again").isEqualTo(gittins.indexNow(ctx, job));
            }
            assertThat(gittins.nextReevaluationMs(ctx)).as(what).isEqualTo(gittins.nextCrossingScanned(ctx));
            double lowest = Double.POSITIVE_INFINITY;
            for (JobState j : s.runningJobs()) lowest = Math.min(lowest, gittins.indexNow(ctx, j));
            java.util.Comparator<JobState> order = gittins.standingOrder(ctx), chained = gittins.standingOrderChained(now);
            assertThat(gittins.lowestRunning).as(what).isEqualTo(lowest);
            for (JobState a : jobs) {
                for (JobState b : jobs) {
                    assertThat(Integer.signum(order.compare(a, b))).as(what + ": " + a.id() + " vs " + b.id())
                            .isEqualTo(Integer.signum(chained.compare(a, b)));
                }
            }
        }
    }

    private static JobSpec randomJob(SplittableRandom rnd, String id, long now) {
        JobSpec.Builder b = JobSpec.builder(id).tenant(rnd.nextBoolean() ? "a" : "b").submitMs(now).priority(rnd.nextInt(3)).preemptible(rnd.nextInt(6) > 0);
        switch (rnd.nextInt(5)) {
            case 0 -> b.gpus(1).milli(100 * rnd.nextInt(1, 10));   // a share: fractional GPU-time
            case 1 -> b.shape(2, 8);
            default -> b.gpus(1 << rnd.nextInt(4));
        }
        return b.build();
    }
}
