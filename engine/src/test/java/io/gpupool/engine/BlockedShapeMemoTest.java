package io.gpupool.engine;

import io.gpupool.engine.status.Resource;
import io.gpupool.engine.status.Code;
import io.gpupool.engine.placement.FilterPlugin;
import io.gpupool.engine.policy.BackfillArgs;
import io.gpupool.engine.policy.PriorityAgingPolicy;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.JobSpec;
import io.gpupool.model.NodeSpec;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

import static io.gpupool.engine.RefusalAssert.assertRefusal;
import static io.gpupool.engine.TestPools.A100;
import static io.gpupool.engine.TestPools.T4;
import static io.gpupool.engine.TestPools.job;
import static io.gpupool.engine.TestPools.pool;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A shape that failed to place is not placed again while the cluster state is unchanged (the scheduler
 * remembers the failure across rounds). That must never change a decision: the same random histories of
 * arrivals, completions, cancellations, cordons and GPU failures give the same starts, preemptions and wait
 * reasons with the memo as without it (a driver filter that passes every node turns it off). The same
 * comparison covers rounds of arrivals only (Scheduler's settled state, for fair-share and qssf), the EASY
 * reservation kept between rounds and the backfill refusals remembered behind it: the driver filter turns those off
 * too, so the plain scheduler always runs full rounds and computes every reservation afresh.
 */
class BlockedShapeMemoTest {
    private static final FilterPlugin PASS_ALL = new FilterPlugin() {
        @Override public String name() { return "pass-all"; }
        @Override public io.gpupool.engine.status.Status filter(io.gpupool.engine.placement.CycleState c, io.gpupool.engine.placement.ReplicaDemand d,
                                       io.gpupool.engine.state.NodeState n) { return null; }
    };

    @Test
    void decisionsAreTheSameWithAndWithoutTheMemo() {
        for (String policy : List.of("fcfs", "fcfs-backfill", "las", "priority", "qssf", "fair-share", "themis")) {
            for (long seed = 1; seed <= 12; seed++) compare(SchedulerConfig.defaults(policy), seed);
        }
        // a shallow backfill depth, so that the walk stops at it and rounds of arrivals behind it skip the walk
        SchedulerConfig backfill = SchedulerConfig.defaults("fcfs-backfill");
        SchedulerConfig priority = SchedulerConfig.defaults("priority");
        for (SchedulerConfig config : List.of(backfill.withPolicyArgs(new BackfillArgs(2)), priority.withPolicyArgs(new PriorityAgingPolicy.Args(1.0, 2)),
                SchedulerConfig.defaults("themis").withPolicyArgs(new BackfillArgs(2)))) {
            for (long seed = 1; seed <= 12; seed++) compare(config, seed);
        }
    }

    @Test
    void aBlockedHeadStartsOnceCapacityComesBack() {
        for (String change : List.of("completion", "uncordon", "healthy GPU")) {
            Scheduler s = new Scheduler(pool(1, 8, A100), SchedulerConfig.defaults("fcfs"));
            switch (change) {
                case "completion" -> {
                    s.submit(job("filler", 4).submitMs(0).build(), 0);
                    assertThat(s.schedule(0).started()).containsExactly("filler");
                }
                case "uncordon" -> s.setCordoned("a100-80gb-0", true);
                default -> s.setGpuHealthy("a100-80gb-0", 3, false);
            }
            s.submit(job("big", 8).submitMs(1).build(), 1);
            // rounds with only arrivals, the cluster unchanged: the head stays blocked (the memo answers)
            for (int t = 1; t <= 3; t++) {
                s.submit(job("more" + t, 8).submitMs(t).build(), t);
                assertThat(s.schedule(t).started()).as(change).isEmpty();
                assertRefusal(s.job("big").waitStatus(), Code.UNSCHEDULABLE, "capacity", Resource.GPUS);
            }
            switch (change) {
                case "completion" -> s.complete("filler", 10);
                case "uncordon" -> s.setCordoned("a100-80gb-0", false);
                default -> s.setGpuHealthy("a100-80gb-0", 3, true);
            }
            assertThat(s.schedule(10).started()).as(change).containsExactly("big");
        }
    }

    private static void compare(SchedulerConfig config, long seed) {
        String policy = config.policy();
        SplittableRandom rnd = new SplittableRandom(seed);
        List<NodeSpec> nodes = new ArrayList<>(pool(3, 8, A100).nodes());
        nodes.addAll(pool(2, 4, T4).nodes());
        ClusterSpec spec = new ClusterSpec(nodes);
        Scheduler memo = new Scheduler(spec, config);
        Scheduler plain = new Scheduler(spec, config);
        plain.addFilter(PASS_ALL);
        assertThat(memo.pipeline().dependsOnlyOnClusterState()).isTrue();
        assertThat(plain.pipeline().dependsOnlyOnClusterState()).isFalse();
        long now = 0;
        int next = 0;
        for (int step = 0; step < 120; step++) {
            now += 1000L * rnd.nextInt(1, 60);
            String what = "seed " + seed + " step " + step + " " + policy;
            int op = rnd.nextInt(10);
            if (op < 5) {
                for (int k = rnd.nextInt(1, 4); k > 0; k--) {
                    JobSpec j = randomJob(rnd, "j" + next++, now);
                    assertThat(memo.submit(j, now).accepted()).as(what).isEqualTo(plain.submit(j, now).accepted());
                }
            } else if (op < 8 && !memo.runningJobs().isEmpty()) {
                List<JobState> running = new ArrayList<>(memo.runningJobs());
                String id = running.get(rnd.nextInt(running.size())).id();
                memo.complete(id, now);
                plain.complete(id, now);
            } else if (op == 8) {
                String node = nodes.get(rnd.nextInt(nodes.size())).name();
                boolean cordon = rnd.nextBoolean();
                memo.setCordoned(node, cordon);
                plain.setCordoned(node, cordon);
            } else {
                NodeSpec n = nodes.get(rnd.nextInt(nodes.size()));
                int gpu = rnd.nextInt(n.gpus().size());
                boolean healthy = rnd.nextInt(3) > 0;
                memo.setGpuHealthy(n.name(), gpu, healthy);
                plain.setGpuHealthy(n.name(), gpu, healthy);
            }
            // several rounds at one instant: the later ones see an unchanged cluster
            for (int r = 0; r < 2; r++) {
                RoundResult a = memo.schedule(now), b = plain.schedule(now);
                assertThat(a.started()).as(what).isEqualTo(b.started());
                assertThat(a.preempted()).as(what).isEqualTo(b.preempted());
            }
            for (JobState j : plain.pendingJobs()) {
                assertThat(memo.job(j.id()).waitReason()).as(what + " " + j.id()).isEqualTo(j.waitReason());
                assertThat(memo.job(j.id()).waitStatus()).as(what + " " + j.id()).isEqualTo(j.waitStatus());
            }
            memo.checkConsistency();
        }
    }

    private static JobSpec randomJob(SplittableRandom rnd, String id, long now) {
        JobSpec.Builder b = job(id, 1).submitMs(now).tenant("t" + rnd.nextInt(3)).priority(rnd.nextInt(3)).user("u" + rnd.nextInt(2));
        // without an estimate the predictor's history answers, and it learns as jobs complete
        if (rnd.nextInt(4) > 0) b.estimateMs(1000L * rnd.nextInt(10, 600));
        switch (rnd.nextInt(6)) {
            case 0 -> b.milli(100 * rnd.nextInt(1, 10));
            case 1 -> b.shape(rnd.nextInt(2, 4), 8);
            case 2 -> b.gpus(4).requireNvlink(true);
            case 3 -> b.gpus(rnd.nextInt(1, 5)).allowedModels(Set.of("T4"));
            default -> b.gpus(1 << rnd.nextInt(4));
        }
        return b.build();
    }
}
