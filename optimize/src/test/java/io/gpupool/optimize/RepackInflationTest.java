package io.gpupool.optimize;

import io.gpupool.engine.JobState;
import io.gpupool.engine.Scheduler;
import io.gpupool.engine.SchedulerConfig;
import io.gpupool.engine.batch.BatchPlacers;
import io.gpupool.model.ClusterSpecs;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.JobSpec;
import io.gpupool.model.SpecException;
import io.gpupool.sim.inflation.InflationStudy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Set;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Online placement with periodic re-packing ({@link InflationStudy#runRepack}, {@link Scheduler#repack}) with
 * the real batch placers. The crafted case is {@link LookAheadInflationTest}'s: one T4 node with 2 GPUs, seed 7
 * draws half, half, whole; one at a time the spread policy puts the halves on different GPUs and strands a GPU.
 */
class RepackInflationTest {
    private static final List<JobSpec> TASKS = List.of(JobSpec.builder("half").milli(500).build(), JobSpec.builder("whole").gpus(1).build());
    private final InflationStudy study = new InflationStudy(ClusterSpecs.parse("1x2:T4", GpuCatalog.standard()), TASKS, 7, 100, 5);

    @Test
    void aRepackRecoversTheGpuThatPlacingOneAtATimeStranded() {
        assertThat(study.run("spread", InflationStudy.placement("spread")).curve().getLast().unallocatedGpus()).isEqualTo(1.0);
        var run = study.runRepack("spread/repack", InflationStudy.placement("spread"), BatchPlacers.create("cpsat:seconds=2"), 1);
        InflationStudy.Point last = run.curve().curve().getLast();
        assertThat(last.arrivedPct()).isEqualTo(100.0);
        assertThat(last.unallocatedGpus()).isEqualTo(0.0);
        assertThat(last.allocatedPct()).isEqualTo(100.0);
        // the whole task waited one re-pack, which moved one half next to the other (the other stayed)
        assertThat(run.repacks().repacks()).isEqualTo(1);
        assertThat(run.repacks().sharesConsidered()).isEqualTo(2);
        assertThat(run.repacks().moved()).isEqualTo(1);
        assertThat(run.repacks().maxMoved()).isEqualTo(1);
        assertThat(run.repacks().started()).isEqualTo(1);
        assertThat(run.repacks().movedShare()).isEqualTo(0.5);
    }

    @Test
    void aSolverThatMayLeaveARunningShareOutGivesTheStartBackAndMovesNothing() {
        // greedy ignores what is required; its answers are checked, and where one would drop a share or do
        // worse than where the shares ran, the re-pack keeps the start
        var run = study.runRepack("spread/repack", InflationStudy.placement("spread"), BatchPlacers.create("greedy"), 1);
        assertThat(run.curve().curve().getLast().unallocatedGpus()).isLessThanOrEqualTo(1.0);
        assertThat(run.repacks().repacks()).isEqualTo(1);
    }

    /** One T4 node with 2 GPUs, spread one at a time: GPU 0 holds a, GPU 1 holds b and e; whole-GPU c waits. */
    private static Scheduler crafted(int a, int b, int e) {
        Scheduler s = new Scheduler(ClusterSpecs.parse("1x2:T4", GpuCatalog.standard()),
                SchedulerConfig.defaults("fair-share").withPlacement(InflationStudy.placement("spread")));
        s.submit(JobSpec.builder("a").milli(a).build(), 0);
        s.submit(JobSpec.builder("b").milli(b).build(), 0);
        s.submit(JobSpec.builder("e").milli(e).build(), 0);
        s.submit(JobSpec.builder("c").gpus(1).build(), 0);
        s.schedule(0);
        int gpuA = s.job("a").allocation().grants().getFirst().gpu();
        assertThat(s.job("b").allocation().grants().getFirst().gpu()).isNotEqualTo(gpuA);
        assertThat(s.job("e").allocation().grants().getFirst().gpu()).isNotEqualTo(gpuA);
        assertThat(s.job("c").status()).isEqualTo(io.gpupool.engine.JobStatus.PENDING);
        return s;
    }

    @Test
    void preemptingTheStrandingShareAdmitsTheWaitingWholeGpuTask() {
        // 0.8 on GPU 0, 0.5 + 0.5 on GPU 1: without preemption nothing fits (1.3 GPUs allocated... of 1.8);
        // preempting the 0.8 share lets the whole task in (2.0), preempting the two halves only reaches 1.8
        Scheduler kept = crafted(800, 500, 500);
        Scheduler.RepackResult none = kept.repack(BatchPlacers.create("cpsat:seconds=2"), 0, false, 1);
        assertThat(none.started()).isEmpty();
        assertThat(none.preempted()).isEmpty();
        assertThat(none.moved()).isZero();
        assertThat(allocated(kept)).isEqualTo(1800);

        Scheduler s = crafted(800, 500, 500);
        Map<String, List<Long>> before = gpus(s);
        Scheduler.RepackResult r = s.repack(BatchPlacers.create("cpsat:seconds=2"), 0, true, 1);
        assertThat(r.preempted()).containsExactly("a");
        assertThat(r.started()).containsExactly("c");
        assertThat(allocated(s)).isEqualTo(2000);
        assertThat(s.job("a").status()).isEqualTo(io.gpupool.engine.JobStatus.PENDING);
        assertThat(s.job("a").preemptions()).isEqualTo(1);
        // b and e keep running where they were: the whole task takes a's GPU, whichever GPU the solver gave it
        assertThat(gpus(s).get("b")).isEqualTo(before.get("b"));
        assertThat(gpus(s).get("e")).isEqualTo(before.get("e"));
        assertThat(r.moved()).isZero();
        s.checkConsistency();   // no GPU over its compute, a whole GPU held alone, state = allocations
    }

    @Test
    void amongAnswersOfEqualValueTheOneWithFewerPreemptionsIsChosen() {
        // 0.8 on GPU 0, 0.4 + 0.4 on GPU 1 (no two of them fit one GPU but b and e): preempting a, or both b and e,
        // admits the whole task alike (1.8 GPUs); one preemption is better than two
        Scheduler s = crafted(800, 400, 400);
        Scheduler.RepackResult r = s.repack(BatchPlacers.create("cpsat:seconds=2"), 0, true, 1);
        assertThat(r.started()).containsExactly("c");
        assertThat(r.preempted()).containsExactly("a");
        assertThat(allocated(s)).isEqualTo(1800);
        s.checkConsistency();   // no GPU over its compute, a whole GPU held alone, state = allocations
    }

    @Test
    void everyMustBeAtLeastOneArrival() {
        assertThatThrownBy(() -> study.runRepack("x", InflationStudy.placement("spread"), BatchPlacers.create("cpsat"), 0))
                .isInstanceOf(SpecException.class).hasMessageContaining("every");
    }

    /**
     * On random small pools and task mixes, placed one at a time by FGD with the tasks that do not fit left
     * waiting, every re-pack: keeps every running task running (the allocated demand never drops, so unallocated
     * GPUs never grow), never over-commits a GPU (shares sum to at most 1000 thousandths, a whole GPU has one
     * holder; the engine's consistency check agrees), and reports as moved exactly the shares whose GPU changed.
     */
    @ParameterizedTest(name = "preempt={0}")
    @ValueSource(booleans = {false, true})
    void aRepackNeverLosesAllocationNeverOvercommitsAndCountsItsMoves(boolean preempt) {
        int repacksThatStarted = 0, moves = 0, preemptions = 0;
        for (long seed = 1; seed <= 6; seed++) {
            SplittableRandom rnd = new SplittableRandom(seed);
            Scheduler s = new Scheduler(ClusterSpecs.parse("3x4:T4,1x8:V100", GpuCatalog.standard()),
                    SchedulerConfig.defaults("fair-share").withPlacement(InflationStudy.placement("fgd")));
            int[] shares = {200, 250, 300, 450, 500, 700, 810};
            for (int i = 0; i < 60; i++) {
                int kind = rnd.nextInt(10);
                JobSpec t = kind < 7 ? JobSpec.builder("t" + i).milli(shares[rnd.nextInt(shares.length)]).build()
                        : JobSpec.builder("t" + i).gpus(kind == 9 ? 2 : 1).build();
                s.submit(t, i);
                s.schedule(i);
                if (i % 10 == 9) {
                    Map<String, List<Long>> before = gpus(s);
                    long allocated = allocated(s);
                    Map<String, Integer> preemptedBefore = new HashMap<>();
                    for (String id : before.keySet()) preemptedBefore.put(id, s.job(id).preemptions());
                    Scheduler.RepackResult r = s.repack(BatchPlacers.create("cpsat:seconds=1"), 0, preempt, i);
                    assertThat(allocated(s)).as("seed %d, arrival %d", seed, i).isGreaterThanOrEqualTo(allocated);
                    if (!r.preempted().isEmpty()) assertThat(allocated(s)).as("a preemption pays").isGreaterThan(allocated);
                    assertThat(allocated(s) - allocated).isEqualTo(r.started().stream().mapToLong(id -> s.job(id).spec().gpuMilliDemand()).sum()
                            - r.preempted().stream().mapToLong(id -> s.job(id).spec().gpuMilliDemand()).sum());
                    if (!preempt) assertThat(r.preempted()).isEmpty();
                    for (String id : r.preempted()) {
                        assertThat(s.job(id).status()).isEqualTo(io.gpupool.engine.JobStatus.PENDING);
                        assertThat(s.job(id).spec().share().isWhole()).as("only shares are preempted").isFalse();
                        assertThat(s.job(id).preemptions()).isEqualTo(preemptedBefore.get(id) + 1);
                    }
                    Map<String, List<Long>> after = gpus(s);
                    Set<String> stayed = new HashSet<>(before.keySet());
                    r.preempted().forEach(stayed::remove);
                    assertThat(after.keySet()).containsAll(stayed);
                    long moved = before.entrySet().stream().filter(e -> stayed.contains(e.getKey()))
                            .filter(e -> s.job(e.getKey()).spec().share().milli() < 1000 && !after.get(e.getKey()).equals(e.getValue())).count();
                    long wholeMoved = before.entrySet().stream()
                            .filter(e -> s.job(e.getKey()).spec().share().isWhole() && !e.getValue().equals(after.get(e.getKey()))).count();
                    assertThat(r.moved()).isEqualTo((int) moved);
                    assertThat(wholeMoved).as("whole-GPU tasks stay put").isZero();
                    s.checkConsistency();   // no GPU over its compute, a whole GPU held alone, state = allocations
                    if (!r.started().isEmpty()) repacksThatStarted++;
                    moves += r.moved();
                    preemptions += r.preempted().size();
                }
            }
        }
        assertThat(repacksThatStarted).as("the pools fill up: some re-packs start waiting tasks").isPositive();
        assertThat(moves).as("and move shares to do it").isPositive();
        if (preempt) assertThat(preemptions).as("and some preempt").isPositive();
    }

    private static long allocated(Scheduler s) {
        return s.runningJobs().stream().mapToLong(j -> j.spec().gpuMilliDemand()).sum();
    }

    private static Map<String, List<Long>> gpus(Scheduler s) {
        Map<String, List<Long>> out = new HashMap<>();
        for (JobState j : s.runningJobs()) out.put(j.id(), j.allocation().grants().stream().map(g -> (long) g.node() << 20 | g.gpu()).sorted().toList());
        return out;
    }

}
