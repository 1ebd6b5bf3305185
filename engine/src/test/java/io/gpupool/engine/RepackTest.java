package io.gpupool.engine;

import io.gpupool.engine.batch.BatchPlacer;
import io.gpupool.engine.batch.FewestMoves;
import io.gpupool.engine.placement.PlacementConfig;
import io.gpupool.engine.state.Allocation;
import io.gpupool.engine.state.GpuGrant;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import static io.gpupool.engine.TestPools.T4;
import static io.gpupool.engine.TestPools.job;
import static io.gpupool.engine.TestPools.pool;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The scheduler's side of re-packing ({@link Scheduler#repack}): the running shares are taken off and offered
 * with the pending jobs, the answer is bound through the engine's rules all or nothing for the shares, and
 * shares that keep their GPU are not counted as moved. A scripted placer stands in (the real ones are tested
 * with re-packs in the optimize module). One T4 node with 2 GPUs; the spread policy puts two half-GPU shares
 * on different GPUs, so a whole-GPU job finds none free. With {@code preempt}, a share the answer leaves out is
 * preempted, but only when that allocates more.
 */
class RepackTest {
    private static final class Scripted implements BatchPlacer {
        final Function<Batch, Map<String, Allocation>> answer;
        final List<Batch> seen = new ArrayList<>();

        Scripted(Function<Batch, Map<String, Allocation>> answer) {
            this.answer = answer;
        }

        @Override public String name() { return "scripted"; }
        @Override public int window() { return 100; }

        @Override
        public Map<String, Allocation> plan(Batch batch) {
            seen.add(batch);
            // what the placer sees: the shares it is given off their GPUs
            for (String id : batch.start().keySet()) {
                GpuGrant was = batch.start().get(id).grants().getFirst();
                assertThat(batch.cluster().node(was.node()).isFullyFree(was.gpu())).isTrue();
            }
            return answer.apply(batch);
        }
    }

    private static Allocation on(String id, int gpu, boolean whole) {
        return new Allocation(id, List.of(List.of(new GpuGrant(0, gpu, 0, 0, whole))));
    }

    /** a and b (shares of aMilli and 500) running on different GPUs, whole-GPU job c pending. */
    private static Scheduler stranded(int aMilli) {
        Scheduler s = new Scheduler(pool(1, 2, T4), SchedulerConfig.defaults("fair-share").withPlacement(PlacementConfig.parse("spread")));
        s.submit(job("a", 1).milli(aMilli).build(), 0);
        s.submit(job("b", 1).milli(500).build(), 0);
        s.submit(job("c", 1).build(), 0);
        s.schedule(0);
        assertThat(gpuOf(s, "a")).isNotEqualTo(gpuOf(s, "b"));
        assertThat(s.job("c").status()).isEqualTo(JobStatus.PENDING);
        return s;
    }

    private static int gpuOf(Scheduler s, String id) {
        return s.job(id).allocation().grants().getFirst().gpu();
    }


    @Test
    void aRepackPutsTheSharesTogetherStartsTheWaitingJobAndCountsOnlyTheShareThatMoved() {
        Scheduler s = stranded(500);
        int aWas = gpuOf(s, "a");
        // the answer puts both shares on a's old GPU... but names a and b the other way round: alike shares are
        // interchangeable, so the one that was there stays and only one moves
        Scripted placer = new Scripted(b -> Map.of("b", on("b", aWas, false), "a", on("a", aWas, false), "c", on("c", 1 - aWas, true)));
        Scheduler.RepackResult r = s.repack(placer, 1);
        assertThat(placer.seen).hasSize(1);
        BatchPlacer.Batch batch = placer.seen.getFirst();
        assertThat(batch.required()).containsExactlyInAnyOrder("a", "b");
        assertThat(batch.jobs()).extracting(j -> j.id()).containsExactly("a", "b", "c");
        assertThat(batch.start().get("a").grants().getFirst().gpu()).isEqualTo(aWas);
        assertThat(r.shares()).isEqualTo(2);
        assertThat(r.moved()).isEqualTo(1);
        assertThat(r.started()).containsExactly("c");
        assertThat(gpuOf(s, "a")).as("a stays").isEqualTo(aWas);
        assertThat(gpuOf(s, "b")).isEqualTo(aWas);
        assertThat(s.job("c").status()).isEqualTo(JobStatus.RUNNING);
        assertThat(s.cluster().usedMilli()).isEqualTo(2000);
        s.checkConsistency();   // no GPU over its compute, a whole GPU held alone, state = allocations
    }

    @Test
    void anAnswerThatOnlySwapsAlikeSharesMovesNothing() {
        Scheduler s = stranded(500);
        int aWas = gpuOf(s, "a"), bWas = gpuOf(s, "b");
        Scheduler.RepackResult r = s.repack(new Scripted(b -> Map.of("a", on("a", bWas, false), "b", on("b", aWas, false))), 1);
        assertThat(r.moved()).isZero();
        assertThat(r.started()).isEmpty();
        assertThat(gpuOf(s, "a")).isEqualTo(aWas);
        assertThat(gpuOf(s, "b")).isEqualTo(bWas);
        s.checkConsistency();   // no GPU over its compute, a whole GPU held alone, state = allocations
    }

    @Test
    void anAnswerThatLeavesARunningShareOutChangesNothing() {
        Scheduler s = stranded(500);
        int aWas = gpuOf(s, "a"), bWas = gpuOf(s, "b");
        long version = s.cluster().version();
        Scheduler.RepackResult r = s.repack(new Scripted(b -> Map.of("a", on("a", aWas, false), "c", on("c", bWas, true))), 1);
        assertThat(r).isEqualTo(Scheduler.RepackResult.NOTHING);
        assertThat(gpuOf(s, "a")).isEqualTo(aWas);
        assertThat(gpuOf(s, "b")).isEqualTo(bWas);
        assertThat(s.job("c").status()).isEqualTo(JobStatus.PENDING);
        assertThat(s.cluster().version()).isEqualTo(version);
        s.checkConsistency();   // no GPU over its compute, a whole GPU held alone, state = allocations
    }

    @Test
    void anAnswerThatOvercommitsAGpuIsRefusedByTheEngine() {
        // 600 + 500 on one GPU: the engine refuses b's place, so nothing moves
        Scheduler s = stranded(600);
        int aWas = gpuOf(s, "a"), bWas = gpuOf(s, "b");
        Scheduler.RepackResult r = s.repack(new Scripted(b -> Map.of("a", on("a", 0, false), "b", on("b", 0, false), "c", on("c", 1, true))), 1);
        assertThat(r).isEqualTo(Scheduler.RepackResult.NOTHING);
        assertThat(gpuOf(s, "a")).isEqualTo(aWas);
        assertThat(gpuOf(s, "b")).isEqualTo(bWas);
        // a pending job given a GPU a share holds is left pending (no GPU is left to move that share to)
        Scheduler t = stranded(500);
        Scheduler.RepackResult r2 = t.repack(new Scripted(b -> Map.of("a", on("a", 0, false), "b", on("b", 1, false), "c", on("c", 0, true))), 1);
        assertThat(r2.started()).isEmpty();
        assertThat(t.job("c").status()).isEqualTo(JobStatus.PENDING);
        s.checkConsistency();   // no GPU over its compute, a whole GPU held alone, state = allocations
        t.checkConsistency();   // no GPU over its compute, a whole GPU held alone, state = allocations
    }

    @Test
    void withNothingPendingThereIsNothingToGainAndThePlacerIsNotAsked() {
        Scheduler s = new Scheduler(pool(1, 2, T4), SchedulerConfig.defaults("fair-share").withPlacement(PlacementConfig.parse("spread")));
        s.submit(job("a", 1).milli(500).build(), 0);
        s.schedule(0);
        Scripted placer = new Scripted(b -> Map.of());
        assertThat(s.repack(placer, 1)).isEqualTo(Scheduler.RepackResult.NOTHING);
        assertThat(placer.seen).isEmpty();
    }

    @Test
    void withAGpuLimitOnlyTheSharesOnTheMostStrandedGpusAreTakenOff() {
        // a (300) strands 700 on its GPU, b (500) 500: with gpus=1 only a is offered, b stays where it is
        Scheduler s = stranded(300);
        int bWas = gpuOf(s, "b");
        Scripted placer = new Scripted(b -> Map.of("a", on("a", bWas, false), "c", on("c", 1 - bWas, true)));
        s.repack(placer, 1, 1);
        assertThat(placer.seen.getFirst().required()).containsExactly("a");
        assertThat(placer.seen.getFirst().jobs()).extracting(j -> j.id()).containsExactly("a", "c");
        assertThat(gpuOf(s, "b")).isEqualTo(bWas);
        assertThat(gpuOf(s, "a")).isEqualTo(bWas);
        assertThat(s.job("c").status()).isEqualTo(JobStatus.RUNNING);
        s.checkConsistency();   // no GPU over its compute, a whole GPU held alone, state = allocations
    }

    @Test
    void withPreemptAShareTheAnswerLeavesOutIsPreemptedAndWaitsAgainWithItsServiceKept() {
        // a (800) strands 200 on its GPU and b (500) 500: leaving a out lets whole-GPU c start, 1,500 allocated instead of 1,300
        Scheduler s = stranded(800);
        int aWas = gpuOf(s, "a"), bWas = gpuOf(s, "b");
        Scripted placer = new Scripted(b -> Map.of("b", on("b", bWas, false), "c", on("c", aWas, true)));
        Scheduler.RepackResult r = s.repack(placer, 0, true, 5_000);
        BatchPlacer.Batch batch = placer.seen.getFirst();
        assertThat(batch.required()).as("with preempt no share is required").isEmpty();
        assertThat(batch.start().keySet()).containsExactlyInAnyOrder("a", "b");
        assertThat(r.preempted()).containsExactly("a");
        assertThat(r.started()).containsExactly("c");
        assertThat(r.moved()).as("a preemption is not a migration").isZero();
        JobState a = s.job("a");
        assertThat(a.status()).isEqualTo(JobStatus.PENDING);
        assertThat(a.allocation()).isNull();
        assertThat(a.preemptions()).isEqualTo(1);
        assertThat(a.attainedMs(5_000)).as("its run so far is kept").isEqualTo(5_000);
        assertThat(s.pendingJobs()).extracting(JobState::id).containsExactly("a");
        assertThat(gpuOf(s, "b")).isEqualTo(bWas);
        assertThat(s.job("c").status()).isEqualTo(JobStatus.RUNNING);
        assertThat(s.cluster().usedMilli()).isEqualTo(1500);
        s.checkConsistency();   // no GPU over its compute, a whole GPU held alone, state = allocations
        // the next round finds no room for a: it waits
        s.schedule(5_000);
        assertThat(s.job("a").status()).isEqualTo(JobStatus.PENDING);
        s.checkConsistency();   // no GPU over its compute, a whole GPU held alone, state = allocations
    }

    @Test
    void withPreemptAnAnswerThatAllocatesLessOrNoMoreChangesNothing() {
        Scheduler s = stranded(500);
        int aWas = gpuOf(s, "a"), bWas = gpuOf(s, "b");
        long version = s.cluster().version();
        // b left out, nothing started: 500 instead of 1,000
        assertThat(s.repack(new Scripted(b -> Map.of("a", on("a", aWas, false))), 0, true, 1)).isEqualTo(Scheduler.RepackResult.NOTHING);
        // both shares out for whole-GPU c: 1,000 as before, two preemptions for nothing
        assertThat(s.repack(new Scripted(b -> Map.of("c", on("c", aWas, true))), 0, true, 2)).isEqualTo(Scheduler.RepackResult.NOTHING);
        assertThat(gpuOf(s, "a")).isEqualTo(aWas);
        assertThat(gpuOf(s, "b")).isEqualTo(bWas);
        assertThat(s.job("a").preemptions()).isZero();
        assertThat(s.job("b").preemptions()).isZero();
        assertThat(s.job("c").status()).isEqualTo(JobStatus.PENDING);
        assertThat(s.cluster().version()).isEqualTo(version);
        s.checkConsistency();   // no GPU over its compute, a whole GPU held alone, state = allocations
    }

    @Test
    void withoutPreemptTheSameAnswerThatLeavesAShareOutChangesNothing() {
        Scheduler s = stranded(800);
        int aWas = gpuOf(s, "a"), bWas = gpuOf(s, "b");
        Scripted placer = new Scripted(b -> Map.of("b", on("b", bWas, false), "c", on("c", aWas, true)));
        assertThat(s.repack(placer, 0, false, 1)).isEqualTo(Scheduler.RepackResult.NOTHING);
        assertThat(placer.seen.getFirst().required()).containsExactlyInAnyOrder("a", "b");
        assertThat(s.job("a").status()).isEqualTo(JobStatus.RUNNING);
        assertThat(s.job("a").preemptions()).isZero();
        assertThat(gpuOf(s, "a")).isEqualTo(aWas);
        assertThat(s.job("c").status()).isEqualTo(JobStatus.PENDING);
        s.checkConsistency();   // no GPU over its compute, a whole GPU held alone, state = allocations
    }

    @Test
    void aDriverThatHoldsPreemptedJobsHasARepacksPreemptionHeldToo() {
        Scheduler s = stranded(800);
        s.holdPreemptedJobs("stopping");
        int aWas = gpuOf(s, "a"), bWas = gpuOf(s, "b");
        s.repack(new Scripted(b -> Map.of("b", on("b", bWas, false), "c", on("c", aWas, true))), 0, true, 1);
        assertThat(s.job("a").status()).isEqualTo(JobStatus.PENDING);
        assertThat(s.job("a").holdReason()).isEqualTo("stopping");
    }

    @Test
    void aWaitingWholeGpuJobTakesAnotherIdleGpuSoThatARunningShareNeedNotMove() {
        // the answer puts whole-GPU c on b's GPU and b on a's (a preempted): any idle T4 serves c as well, so b stays
        Scheduler s = stranded(800);
        int aWas = gpuOf(s, "a"), bWas = gpuOf(s, "b");
        Scheduler.RepackResult r = s.repack(new Scripted(b -> Map.of("b", on("b", aWas, false), "c", on("c", bWas, true))), 0, true, 1);
        assertThat(r.preempted()).containsExactly("a");
        assertThat(r.started()).containsExactly("c");
        assertThat(r.moved()).isZero();
        assertThat(gpuOf(s, "b")).isEqualTo(bWas);
        assertThat(gpuOf(s, "c")).isEqualTo(aWas);
        s.checkConsistency();   // no GPU over its compute, a whole GPU held alone, state = allocations
    }

    @Test
    void movesCountsTheSharesWhoseGpuChanged() {
        Map<String, Allocation> before = Map.of("a", on("a", 0, false), "b", on("b", 1, false));
        assertThat(FewestMoves.moves(before, Map.of("a", on("a", 0, false), "b", on("b", 0, false)))).isEqualTo(1);
        assertThat(FewestMoves.moves(before, before)).isZero();
    }
}
