package io.gpupool.engine.round;

import io.gpupool.engine.JobState;
import io.gpupool.engine.JobStatus;
import io.gpupool.engine.Scheduler;
import io.gpupool.engine.SchedulerConfig;
import io.gpupool.engine.placement.CycleState;
import io.gpupool.engine.state.ClusterState;
import io.gpupool.engine.TestPools;
import io.gpupool.model.JobSpec;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The preemption planner's count of idle GPUs ({@link IdleGpuCounts}) is a necessary condition: over random pools
 * (whole GPUs, shares packed several to a GPU, gangs, unhealthy GPUs) and random victim lists, whenever it says a job
 * could not fit with a range of the list gone, releasing those jobs and placing the job fails too. One instance serves
 * every step (its counts kept per prefix while the cluster is unchanged, restarted when it changes), asked for ranges
 * that grow, shrink and start later, and for victims preempted since they were listed. It must also say "cannot"
 * often enough to matter.
 */
class IdleGpuCountsTest {

    @Test
    void neverRulesOutAJobThatFitsWithoutTheVictims() {
        int ruledOut = 0, fits = 0;
        for (long seed = 1; seed <= 40; seed++) {
            SplittableRandom rnd = new SplittableRandom(seed);
            Scheduler s = sixA100Nodes();
            IdleGpuCounts counts = new IdleGpuCounts();
            long now = 0;
            int next = 0;
            for (int step = 0; step < 40; step++) {
                now += 1000;
                for (int k = rnd.nextInt(1, 5); k > 0; k--) s.submit(randomJob(rnd, "j" + next++, now), now);
                List<JobState> running = new ArrayList<>(s.runningJobs());
                if (!running.isEmpty() && rnd.nextInt(3) == 0) s.complete(running.get(rnd.nextInt(running.size())).id(), now);
                if (rnd.nextInt(8) == 0) s.setGpuHealthy("a100-80gb-" + rnd.nextInt(6), rnd.nextInt(8), rnd.nextInt(3) > 0);
                s.schedule(now);
                // a whole-GPU job that waits (never scheduled: no round runs before the check)
                JobSpec spec = probe(rnd, "probe" + step, now);
                now += 1;
                s.submit(spec, now);
                JobState probe = s.job(spec.id());
                JobState[] victims = inRandomOrder(s.runningJobs(), rnd);
                int[] runOf = runsOf(victims);
                if (victims.length > 0 && rnd.nextInt(4) == 0) {
                    // one listed victim was preempted since (it holds nothing now): the counts must skip it
                    s.preempt(victims[rnd.nextInt(victims.length)].id(), now);
                }
                counts.begin(s.cluster(), victims, runOf);
                for (int ask = 0; ask < 6; ask++) {
                    if (victims.length > 0 && rnd.nextInt(5) == 0) {
                        // the cluster changes between two asks (a listed job ends): the counts start again
                        JobState v = victims[rnd.nextInt(victims.length)];
                        if (v.status() == JobStatus.RUNNING) s.complete(v.id(), now);
                    }
                    int from = rnd.nextInt(3) == 0 ? Math.min(victims.length, rnd.nextInt(3)) : 0;
                    int to = from + rnd.nextInt(victims.length - from + 1);
                    boolean couldHold = counts.couldHold(probe, from, to);
                    List<JobState> gone = new ArrayList<>();
                    for (int i = from; i < to; i++) {
                        if (victims[i].status() == JobStatus.RUNNING && victims[i].preemptions() == runOf[i]) gone.add(victims[i]);
                    }
                    boolean placed = fitsWithout(s, probe, gone);
                    if (!couldHold) ruledOut++;
                    if (placed) fits++;
                    assertThat(!placed || couldHold).as("seed %d step %d victims [%d, %d)", seed, step, from, to).isTrue();
                }
                s.cancel(spec.id(), now);
            }
        }
        assertThat(ruledOut).isGreaterThan(300);
        assertThat(fits).isGreaterThan(300);
    }

    /**
     * The counts kept from one round to the next ({@link IdleGpuCounts#begin} with a new list), asked for ranges that
     * grow, shrink, start later (the planner's first entries were preempted) or earlier again, answer as the count by its
     * definition does (release, count each node's idle GPUs, roll back): over random histories where the next round's
     * list is the same, the same with two entries swapped, one entry replaced, or lists a victim in another run, at the
     * same cluster version or after the cluster changed (a job started or ended, a GPU's health). A kept instance that
     * trusted its steps without the version, kept a changed node's steps, or kept counting an entry dropped from the
     * front as released, or did not check this round's entries against the ones it counted, answers differently here.
     * Where it says yes, the shortest range it names ({@link IdleGpuCounts#shortestHolding}) holds by the same
     * definition and one entry less does not.
     */
    @Test
    void countsKeptAcrossRoundsAnswerAsAFreshCount() {
        int asks = 0, reused = 0, ruledOut = 0, shortened = 0, later = 0;
        for (long seed = 1; seed <= 40; seed++) {
            SplittableRandom rnd = new SplittableRandom(seed);
            Scheduler s = sixA100Nodes();
            IdleGpuCounts kept = new IdleGpuCounts();
            long now = 0;
            int next = 0;
            JobState[] victims = new JobState[0];
            int[] runOf = new int[0];
            for (int round = 0; round < 60; round++) {
                now += 1000;
                long before = s.cluster().version();
                switch (rnd.nextInt(6)) {
                    case 0 -> {   // the cluster changes: jobs come and go
                        for (int k = rnd.nextInt(1, 4); k > 0; k--) s.submit(randomJob(rnd, "j" + next++, now), now);
                        List<JobState> running = new ArrayList<>(s.runningJobs());
                        if (!running.isEmpty() && rnd.nextInt(2) == 0) s.complete(running.get(rnd.nextInt(running.size())).id(), now);
                        s.schedule(now);
                    }
                    case 1 -> s.setGpuHealthy("a100-80gb-" + rnd.nextInt(6), rnd.nextInt(8), rnd.nextInt(2) > 0);
                    case 2 -> {   // a listed victim runs again: same job, another run
                        if (victims.length > 0) {
                            JobState v = victims[rnd.nextInt(victims.length)];
                            if (v.status() == JobStatus.RUNNING) {
                                s.preempt(v.id(), now);
                                s.schedule(now);
                            }
                        }
                    }
                    default -> { }   // only time passes: the cluster is as it was
                }
                // this round's list: mostly the last one again, else the last one changed a little, else a new one
                List<JobState> running = new ArrayList<>(s.runningJobs());
                JobState[] list;
                int kind = rnd.nextInt(5);
                if (victims.length < 2 || kind == 0) {
                    list = inRandomOrder(running, rnd);
                } else {
                    list = victims.clone();
                    if (kind == 1) {
                        int a = rnd.nextInt(list.length), b = rnd.nextInt(list.length);
                        JobState t = list[a];
                        list[a] = list[b];
                        list[b] = t;
                    } else if (kind == 2) {   // a running job not listed yet takes one's place (a list holds each job once)
                        List<JobState> unlisted = new ArrayList<>(running);
                        unlisted.removeAll(Arrays.asList(list));
                        if (!unlisted.isEmpty()) list[rnd.nextInt(list.length)] = unlisted.get(rnd.nextInt(unlisted.size()));
                    }
                }
                int[] runs = runsOf(list);
                if (Arrays.equals(list, victims) && Arrays.equals(runs, runOf) && s.cluster().version() == before) reused++;
                victims = list;
                runOf = runs;
                kept.begin(s.cluster(), victims, runOf);
                for (int ask = 0; ask < 4; ask++) {
                    // mostly from the list's start; else later (the planner's first entries were preempted), or back again
                    int from = rnd.nextInt(3) == 0 ? rnd.nextInt(Math.min(4, victims.length) + 1) : 0;
                    int to = from + rnd.nextInt(victims.length - from + 1);
                    // a waiting whole-GPU job (queued and withdrawn without a round: the cluster does not change)
                    JobSpec spec = probe(rnd, "probe" + round + "-" + ask, now);
                    s.submit(spec, now);
                    JobState probe = s.job(spec.id());
                    boolean expected = countedPlainly(s, probe, victims, runOf, from, to);
                    assertThat(kept.couldHold(probe, from, to)).as("seed %d round %d victims [%d, %d)", seed, round, from, to).isEqualTo(expected);
                    if (expected && to > from) {
                        // the shortest range the counts let through (what the planner places first): it holds, one less does not
                        int shortest = kept.shortestHolding(probe, from, to);
                        assertThat(shortest).as("seed %d round %d shortest of [%d, %d)", seed, round, from, to).isBetween(from + 1, to);
                        assertThat(countedPlainly(s, probe, victims, runOf, from, shortest)).as("seed %d round %d [%d, %d) holds", seed, round, from, shortest).isTrue();
                        if (shortest > from + 1) {
                            assertThat(countedPlainly(s, probe, victims, runOf, from, shortest - 1)).as("seed %d round %d [%d, %d) does not", seed, round, from, shortest - 1).isFalse();
                            shortened++;
                        }
                    }
                    if (from > 0) later++;
                    s.cancel(spec.id(), now);
                    asks++;
                    if (!expected) ruledOut++;
                }
            }
        }
        String counts = "asks %d, reused %d, ruled out %d, shortened %d, later %d".formatted(asks, reused, ruledOut, shortened, later);
        assertThat(asks).as(counts).isGreaterThan(5000);
        assertThat(reused).as(counts).isGreaterThan(500);
        assertThat(ruledOut).as(counts).isGreaterThan(700);
        assertThat(shortened).as(counts).isGreaterThan(500);
        assertThat(later).as(counts).isGreaterThan(1000);
    }

    /**
     * A range that starts later leaves the entries before it running: two halves of one GPU listed [A, B], asked for
     * [A] and then [B] alone. The GPU is idle with both gone, never with one; counts that went on holding A as released
     * after the range moved past it would call the GPU idle once B is counted.
     */
    @Test
    void aRangeThatStartsLaterCountsTheEntriesBeforeItAsHeld() {
        Scheduler s = new Scheduler(TestPools.pool(1, 1, TestPools.A100), SchedulerConfig.defaults("fcfs"));
        for (String id : List.of("a", "b")) s.submit(JobSpec.builder(id).submitMs(0).gpus(1).milli(500).build(), 0);
        s.schedule(0);
        JobState a = s.job("a"), b = s.job("b");
        assertThat(List.of(a.status(), b.status())).containsOnly(JobStatus.RUNNING);
        s.submit(JobSpec.builder("probe").submitMs(1).gpus(1).build(), 1);
        JobState probe = s.job("probe");
        IdleGpuCounts counts = new IdleGpuCounts();
        JobState[] victims = {a, b};
        counts.begin(s.cluster(), victims, runsOf(victims));
        assertThat(counts.couldHold(probe, 0, 1)).as("a gone, b holds the GPU").isFalse();
        assertThat(counts.couldHold(probe, 1, 2)).as("b gone, a holds the GPU").isFalse();
        assertThat(counts.couldHold(probe, 0, 2)).as("both gone").isTrue();
    }

    /**
     * The count by its definition: with the listed victims of [0, to) still in their run released, the replicas the
     * nodes' idle (fully free) GPUs hold, summed over the nodes, reach the job's.
     */
    private static Scheduler sixA100Nodes() {
        return new Scheduler(TestPools.pool(6, 8, TestPools.A100), SchedulerConfig.defaults("fcfs"));
    }

    /** A whole-GPU job of 1-3 replicas of 1, 2, 4 or 8 GPUs. */
    private static JobSpec probe(SplittableRandom rnd, String id, long now) {
        return JobSpec.builder(id).submitMs(now).shape(rnd.nextInt(1, 4), 1 << rnd.nextInt(4)).build();
    }

    private static JobState[] inRandomOrder(java.util.Collection<JobState> jobs, SplittableRandom rnd) {
        List<JobState> list = new ArrayList<>(jobs);
        java.util.Collections.shuffle(list, new java.util.Random(rnd.nextLong()));
        return list.toArray(new JobState[0]);
    }

    /** Each job's preemption count: the run it is in. */
    private static int[] runsOf(JobState[] jobs) {
        int[] runs = new int[jobs.length];
        for (int i = 0; i < jobs.length; i++) runs[i] = jobs[i].preemptions();
        return runs;
    }

    private static boolean countedPlainly(Scheduler s, JobState job, JobState[] victims, int[] runOf, int from, int to) {
        ClusterState cluster = s.cluster();
        int mark = cluster.checkpoint();
        try {
            for (int i = from; i < to; i++) {
                if (victims[i].status() == JobStatus.RUNNING && victims[i].preemptions() == runOf[i]) cluster.release(victims[i].allocation());
            }
            int replicas = 0;
            for (int n = 0; n < cluster.nodeCount(); n++) replicas += cluster.node(n).fullyFreeGpus() / job.spec().shape().gpusPerReplica();
            return replicas >= job.spec().shape().replicas();
        } finally {
            cluster.rollback(mark);
        }
    }

    /** The plain computation: release every victim, place, roll back. */
    private static boolean fitsWithout(Scheduler s, JobState job, List<JobState> victims) {
        ClusterState cluster = s.cluster();
        int mark = cluster.checkpoint();
        try {
            for (JobState v : victims) cluster.release(v.allocation());
            return s.pipeline().place(new CycleState(cluster, job.spec(), s.workloadProfile(), null), false).ok();
        } finally {
            cluster.rollback(mark);
        }
    }

    private static JobSpec randomJob(SplittableRandom rnd, String id, long now) {
        JobSpec.Builder b = JobSpec.builder(id).submitMs(now);
        switch (rnd.nextInt(4)) {
            case 0 -> b.gpus(1).milli(100 * rnd.nextInt(1, 10));   // shares: several jobs on one GPU
            case 1 -> b.shape(2, rnd.nextInt(1, 5));
            default -> b.gpus(1 << rnd.nextInt(4));
        }
        return b.build();
    }
}
