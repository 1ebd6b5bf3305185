package io.gpupool.engine;

import io.gpupool.engine.reservation.ReservationRequest;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.JobSpec;
import io.gpupool.model.NodeSpec;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.SplittableRandom;

import static io.gpupool.engine.TestPools.A100;
import static io.gpupool.engine.TestPools.T4;
import static io.gpupool.engine.TestPools.job;
import static io.gpupool.engine.TestPools.pool;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A full round of a SKIP policy stops walking its queue once every shape still queued has been refused and no job
 * left could preempt or be refused otherwise; the jobs it left read their shape's refusal from the round. A policy whose
 * later jobs preempt less also passes over a refused shape's later jobs, and plans for no blocked job larger than one
 * that found no victims; and a round of gittins at a level crossing with nothing else since a round that changed
 * nothing does not walk at all when no index fell so that a waiting job may stop a job it could not stop then
 * ({@link io.gpupool.engine.policy.QuietRounds}). That must never change a decision nor what any job reports: the same
 * random histories (arrivals of a few shapes, completions, cancellations, admin preemptions, holds and releases,
 * starts on a chosen node, replaced specs, cordons, GPU faults, array caps, jobs given a reservation, a reservation
 * window, guarantees, preempted jobs held as the service holds them, several rounds at one instant or none between
 * steps, rounds at the moments the scheduler asks for with only time passed) give the same starts and preemptions as
 * a scheduler whose rounds always walk the whole queue, and after every step (whenever a user could read them) every
 * job's wait reason and wait status are the same.
 */
class StoppedWalkTest {
    @Test
    void jobsReadWhatTheWholeWalkGivesThem() {
        long stopped = 0;
        for (String policy : List.of("las", "fair-share", "qssf", "srtf-oracle", "gittins", "fcfs-backfill")) {
            long[] counts = new long[5];
            for (long seed = 1; seed <= 12; seed++) compare(policy, seed, counts);
            long stoppedOfPolicy = counts[0], passedOver = counts[1], resumed = counts[2], notPlanned = counts[3], quiet = counts[4];
            System.out.printf("%s: walks stopped %d, shapes passed over %d, passes taken back %d, plans skipped by size %d, quiet rounds %d%n",
                    policy, stoppedOfPolicy, passedOver, resumed, notPlanned, quiet);
            // gittins tells a round at a level crossing that changes nothing (QuietRounds): it does not walk
            if (policy.equals("gittins")) assertThat(quiet).as("gittins: quiet rounds").isGreaterThan(100);
            else assertThat(quiet).as(policy + ": no quiet rounds").isZero();
            if (policy.equals("fcfs-backfill")) assertThat(stoppedOfPolicy).as(policy + " backfills: its walk never stops so").isZero();
            else assertThat(stoppedOfPolicy).as(policy + ": walks stopped early").isGreaterThan(100);
            // a preemptive SKIP policy whose later jobs preempt less stops polling a refused shape's line, and polls it
            // again from where the walk is when a preemption makes room
            if (List.of("las", "srtf-oracle", "gittins").contains(policy)) {
                assertThat(passedOver).as(policy + ": shapes passed over").isGreaterThan(100);
                assertThat(resumed).as(policy + ": passes taken back").isGreaterThan(5);
                // and a blocked job larger than one that found no victims in the round does not plan
                assertThat(notPlanned).as(policy + ": plans skipped by size").isGreaterThan(100);
            } else {
                assertThat(passedOver).as(policy + ": its queue is not kept by shape").isZero();
                assertThat(notPlanned).as(policy + ": plans skipped by size").isZero();
            }
            stopped += stoppedOfPolicy;
        }
        assertThat(stopped).isGreaterThan(1000);
    }

    /**
     * A policy that never preempts ends its walk at the next job once every GPU is in use, and the jobs not reached
     * say so; its walk must not stop first although every shape queued was refused (qssf: the 8-GPU shape is refused,
     * then a 4-GPU job fills the pool, and another 8-GPU job is left).
     */
    @Test
    void aFullPoolEndsTheWalkWithItsOwnNote() {
        Scheduler s = new Scheduler(pool(1, 8, A100), SchedulerConfig.defaults("qssf"));
        s.submit(job("running", 4).submitMs(0).estimateMs(1_000_000).build(), 0);
        assertThat(s.schedule(0).started()).containsExactly("running");
        s.submit(job("big-short", 8).submitMs(1).estimateMs(10_000).build(), 1);   // qssf: least GPU-time first
        s.submit(job("fills", 4).submitMs(1).estimateMs(100_000).build(), 1);
        s.submit(job("big-long", 8).submitMs(1).estimateMs(1_000_000).build(), 1);
        long stoppedBefore = s.walksStopped();
        assertThat(s.schedule(1).started()).containsExactly("fills");
        assertThat(s.job("big-short").waitReason()).startsWith("waits: no node can hold 8 whole GPUs");
        assertThat(s.job("big-long").waitReason()).isEqualTo("waits: every GPU is in use");
        assertThat(s.walksStopped()).isEqualTo(stoppedBefore);
    }

    /**
     * One random history on both schedulers; adds to {@code counts} how many of the fast one's walks stopped early,
     * how many refused shapes its walks passed over, and how many of those passes a preemption took back.
     */
    private static void compare(String policy, long seed, long[] counts) {
        SplittableRandom rnd = new SplittableRandom(seed * 7919 + policy.hashCode());
        List<NodeSpec> nodes = new ArrayList<>(pool(2, 8, A100).nodes());
        nodes.addAll(pool(1, 4, T4).nodes());
        ClusterSpec spec = new ClusterSpec(nodes);
        SchedulerConfig config = SchedulerConfig.defaults(policy);
        if (seed % 4 == 0) {   // guarantees: fair-share's admission and reclaim apply (its walks cannot stop)
            Map<String, TenantConfig> tenants = new LinkedHashMap<>();
            for (int t = 0; t < 3; t++) tenants.put("t" + t, new TenantConfig("t" + t, 1, t == 0 ? 6 : 0, 0));
            config = config.withTenants(tenants);
        }
        Map<String, Long> trueRuntimes = new HashMap<>();
        Scheduler fast = new Scheduler(spec, config, id -> trueRuntimes.get(id));
        Scheduler whole = new Scheduler(spec, config, id -> trueRuntimes.get(id));
        whole.walkWholeQueues();
        if (seed % 2 == 0) {   // the service's way: a preempted job is held until its attempt is gone
            fast.holdPreemptedJobs("attempt still stopping");
            whole.holdPreemptedJobs("attempt still stopping");
        }
        List<String> ids = new ArrayList<>();
        long now = 0;
        int next = 0;
        SplittableRandom clock = new SplittableRandom(seed);   // its own stream: the histories above stay as they were
        for (int step = 0; step < 150; step++) {
            now += 1000L * rnd.nextInt(1, 90);
            String what = policy + " seed " + seed + " step " + step;
            int op = rnd.nextInt(20);
            if (op < 8) {
                for (int k = rnd.nextInt(1, 5); k > 0; k--) {
                    String id = "j" + next++;
                    JobSpec j = randomJob(rnd, id, now);
                    trueRuntimes.put(id, 1000L * rnd.nextInt(1, 3000));
                    ids.add(id);
                    assertThat(fast.submit(j, now).accepted()).as(what).isEqualTo(whole.submit(j, now).accepted());
                }
            } else if (op < 11) {
                JobState r = any(rnd, whole.runningJobs());
                if (r != null) {
                    fast.complete(r.id(), now);
                    whole.complete(r.id(), now);
                }
            } else if (op == 11) {
                JobState r = any(rnd, rnd.nextBoolean() ? whole.runningJobs() : whole.pendingJobs());
                if (r != null) assertThat(fast.cancel(r.id(), now)).as(what).isEqualTo(whole.cancel(r.id(), now));
            } else if (op == 12) {
                JobState r = any(rnd, whole.runningJobs());
                if (r != null) {
                    fast.preempt(r.id(), now);
                    whole.preempt(r.id(), now);
                }
            } else if (op == 13) {
                JobState p = any(rnd, whole.pendingJobs());
                if (p != null) {
                    fast.hold(p.id(), "held by test " + step);
                    whole.hold(p.id(), "held by test " + step);
                    if (rnd.nextBoolean()) {   // and let go at once: it reads what it read before
                        same(fast, whole, ids, what + " held");
                        assertThat(fast.releaseHold(p.id())).isEqualTo(whole.releaseHold(p.id()));
                    }
                }
            } else if (op == 14) {
                for (JobState p : new ArrayList<>(whole.pendingJobs())) {
                    if (p.holdReason() != null && rnd.nextBoolean()) assertThat(fast.releaseHold(p.id())).as(what).isEqualTo(whole.releaseHold(p.id()));
                }
            } else if (op == 15) {
                // a job ends and a driver binds a waiting job on a node it chose (kube-scheduler), before any round
                // (a job no larger, on the node it freed, mostly fits there: a failed start would replace its reason)
                JobState r = any(rnd, whole.runningJobs());
                if (r != null) {
                    String node = nodes.get(r.allocation().replicaNodes().getFirst()).name();
                    fast.complete(r.id(), now);
                    whole.complete(r.id(), now);
                    JobState p = any(rnd, whole.pendingJobs().stream().filter(j -> j.gpuUnits() <= r.gpuUnits() && j.holdReason() == null).toList());
                    if (p != null) {
                        boolean ok = fast.startOn(p.id(), node, now).ok();
                        assertThat(ok).as(what).isEqualTo(whole.startOn(p.id(), node, now).ok());
                        if (ok && rnd.nextBoolean()) {   // and preempted at once: queued again with the reason it had
                            same(fast, whole, ids, what + " started on " + node);
                            fast.preempt(p.id(), now);
                            whole.preempt(p.id(), now);
                        }
                    }
                }
            } else if (op == 16) {
                JobState p = any(rnd, whole.pendingJobs());
                if (p != null) {
                    JobSpec again = randomJob(rnd, p.id(), p.spec().submitTimeMs());
                    assertThat(fast.replacePending(again, now).accepted()).as(what).isEqualTo(whole.replacePending(again, now).accepted());
                }
            } else if (op == 17) {
                String node = nodes.get(rnd.nextInt(nodes.size())).name();
                boolean cordon = rnd.nextBoolean();
                fast.setCordoned(node, cordon);
                whole.setCordoned(node, cordon);
            } else if (op == 18) {
                NodeSpec n = nodes.get(rnd.nextInt(nodes.size()));
                int gpu = rnd.nextInt(n.gpus().size());
                boolean healthy = rnd.nextInt(3) > 0;
                fast.setGpuHealthy(n.name(), gpu, healthy);
                whole.setGpuHealthy(n.name(), gpu, healthy);
            } else {
                rarely(rnd, fast, whole, now, step);
            }
            same(fast, whole, ids, what + " after the step");
            for (int r = rnd.nextInt(3); r > 0; r--) {   // no round, one, or two at one instant
                RoundResult a = fast.schedule(now), b = whole.schedule(now);
                assertThat(a.started()).as(what).isEqualTo(b.started());
                assertThat(a.preempted()).as(what).isEqualTo(b.preempted());
                same(fast, whole, ids, what + " round " + r);
            }
            // then, often, only time passes: rounds at the moments the scheduler asks for (a level crossing), as a replay's
            for (int k = clock.nextInt(4); k > 0; k--) {
                OptionalLong due = whole.nextReevaluationMs(now);
                assertThat(fast.nextReevaluationMs(now)).as(what).isEqualTo(due);
                if (due.isEmpty()) break;
                now = Math.max(now, due.getAsLong());
                RoundResult a = fast.schedule(now), b = whole.schedule(now);
                assertThat(a.started()).as(what + " at a reevaluation").isEqualTo(b.started());
                assertThat(a.preempted()).as(what + " at a reevaluation").isEqualTo(b.preempted());
                same(fast, whole, ids, what + " at a reevaluation");
            }
            fast.checkConsistency();
        }
        assertThat(whole.walksStopped()).isZero();
        assertThat(whole.shapesPassedOver()[0]).isZero();
        assertThat(whole.plansSkippedBySize()).isZero();
        assertThat(whole.quietRounds()).isZero();
        counts[0] += fast.walksStopped();
        counts[1] += fast.shapesPassedOver()[0];
        counts[2] += fast.shapesPassedOver()[1];
        counts[3] += fast.plansSkippedBySize();
        counts[4] += fast.quietRounds();
    }

    /** What turns the stop off for a while: a job in a reservation, an array cap, a reservation window. */
    private static void rarely(SplittableRandom rnd, Scheduler fast, Scheduler whole, long now, int step) {
        switch (rnd.nextInt(4)) {
            case 0 -> {
                JobState p = any(rnd, whole.pendingJobs());
                if (p != null) {   // a reservation that does not exist: the job waits, saying so, until cancelled
                    fast.useReservation(p.id(), "gone");
                    whole.useReservation(p.id(), "gone");
                }
            }
            case 1 -> {
                JobState p = any(rnd, whole.pendingJobs());
                if (p != null && step > 120) {   // late: a group stays for the rest of the history
                    fast.capConcurrency(p.id(), "array", 1);
                    whole.capConcurrency(p.id(), "array", 1);
                }
            }
            case 2 -> {
                ReservationRequest q = ReservationRequest.ofModel("window" + step, "t1", now + 10_000, now + 60_000, 2, "A100-80GB");
                boolean madeFast = tryReserve(fast, q, now), madeWhole = tryReserve(whole, q, now);
                assertThat(madeFast).isEqualTo(madeWhole);
            }
            default -> {
                for (int s = 0; s <= step; s++) assertThat(fast.cancelReservation("window" + s)).isEqualTo(whole.cancelReservation("window" + s));
            }
        }
    }

    private static boolean tryReserve(Scheduler s, ReservationRequest q, long now) {
        try {
            s.reserve(q, now);
            return true;
        } catch (RuntimeException refused) {
            return false;
        }
    }

    private static void same(Scheduler fast, Scheduler whole, List<String> ids, String what) {
        for (String id : ids) {
            JobState a = fast.job(id), b = whole.job(id);
            assertThat(a.status()).as(what + " " + id).isEqualTo(b.status());
            assertThat(a.waitReason()).as(what + " " + id).isEqualTo(b.waitReason());
            assertThat(a.waitStatus()).as(what + " " + id).isEqualTo(b.waitStatus());
        }
    }

    private static JobState any(SplittableRandom rnd, java.util.Collection<JobState> jobs) {
        if (jobs.isEmpty()) return null;
        return new ArrayList<>(jobs).get(rnd.nextInt(jobs.size()));
    }

    /** A few shapes only, so that a round often refuses every shape queued. */
    private static JobSpec randomJob(SplittableRandom rnd, String id, long now) {
        JobSpec.Builder b = job(id, 1).submitMs(now).tenant("t" + rnd.nextInt(3)).priority(rnd.nextInt(2)).preemptible(rnd.nextInt(5) > 0);
        if (rnd.nextInt(3) > 0) b.estimateMs(1000L * rnd.nextInt(10, 600));
        switch (rnd.nextInt(5)) {
            case 0 -> b.milli(500);
            case 1 -> b.shape(2, 8);
            case 2 -> b.gpus(4).allowedModels(Set.of("T4"));
            default -> b.gpus(1 << rnd.nextInt(4));
        }
        return b.build();
    }
}
