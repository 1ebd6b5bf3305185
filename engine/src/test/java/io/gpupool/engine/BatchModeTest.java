package io.gpupool.engine;

import io.gpupool.engine.status.Resource;
import io.gpupool.engine.status.Code;
import io.gpupool.engine.batch.BatchPlacer;
import io.gpupool.engine.batch.BatchPlacers;
import io.gpupool.engine.state.Allocation;
import io.gpupool.engine.state.GpuGrant;
import io.gpupool.model.SpecException;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import static io.gpupool.engine.RefusalAssert.assertRefusal;
import static io.gpupool.engine.TestPools.A100;
import static io.gpupool.engine.TestPools.job;
import static io.gpupool.engine.TestPools.pool;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The scheduler's side of batch mode: the placer sees the head of the queue in policy order, what it picks
 * starts through the engine's own rules (an answer the engine rejects is dropped, never bound), and the
 * usual one-by-one round then runs over what is still pending. The placers themselves are tested in the
 * optimize module; here a scripted one stands in, so the scheduler's contract is tested on its own.
 */
class BatchModeTest {
    /** A placer that answers with a fixed function of the batch and records what it was shown. */
    private static final class Scripted implements BatchPlacer {
        final int window;
        final Function<Batch, Map<String, Allocation>> answer;
        final List<List<String>> seen = new ArrayList<>();

        Scripted(int window, Function<Batch, Map<String, Allocation>> answer) {
            this.window = window;
            this.answer = answer;
        }

        @Override public String name() { return "scripted"; }
        @Override public int window() { return window; }

        @Override
        public Map<String, Allocation> plan(Batch batch) {
            seen.add(batch.jobs().stream().map(j -> j.id()).toList());
            return answer.apply(batch);
        }
    }

    private static Allocation whole(String id, int node, int... gpus) {
        List<GpuGrant> rep = new ArrayList<>();
        for (int g : gpus) rep.add(new GpuGrant(node, g, 0, 0, true));
        return new Allocation(id, List.of(rep));
    }

    @Test
    void thePlacersChoiceStartsFirstThenTheRoundGoesOnOneByOne() {
        Scheduler s = new Scheduler(pool(2, 4, A100), SchedulerConfig.defaults("fcfs"));
        // one by one, FCFS would start the two 3-GPU jobs and leave both 4-GPU jobs waiting
        for (String id : List.of("a3", "b3", "c4", "d4")) s.submit(job(id, id.endsWith("3") ? 3 : 4).build(), 0);
        Scripted placer = new Scripted(3, b -> Map.of("c4", whole("c4", 0, 0, 1, 2, 3), "b3", whole("b3", 1, 0, 1, 2)));
        s.setBatchPlacer(placer);
        var round = s.schedule(0);
        assertThat(placer.seen).containsExactly(List.of("a3", "b3", "c4"));
        assertThat(round.started()).containsExactly("b3", "c4");
        assertThat(s.job("a3").status()).isEqualTo(JobStatus.PENDING);
        // a3 was then tried one by one and blocked (strict FCFS): no node has 3 idle GPUs left
        assertRefusal(s.job("a3").waitStatus(), Code.UNSCHEDULABLE, "capacity", Resource.GPUS);
        s.checkConsistency();
    }

    @Test
    void anAnswerTheEngineRejectsIsDroppedAndTheJobGoesThroughTheUsualRound() {
        Scheduler s = new Scheduler(pool(1, 4, A100), SchedulerConfig.defaults("fcfs"));
        s.submit(job("x", 2).build(), 0);
        s.submit(job("y", 2).build(), 0);
        // both answers claim GPU 0: the engine binds x, refuses y's, and y is then placed by the pipeline
        s.setBatchPlacer(new Scripted(8, b -> Map.of("x", whole("x", 0, 0, 1), "y", whole("y", 0, 0, 3))));
        var round = s.schedule(0);
        assertThat(round.started()).containsExactly("x", "y");
        assertThat(s.job("y").allocation().grants()).extracting(GpuGrant::gpu).containsExactlyInAnyOrder(2, 3);
        s.checkConsistency();
    }

    @Test
    void tenantLimitsHoldInsideTheBatch() {
        Scheduler s = new Scheduler(pool(1, 8, A100), SchedulerConfig.defaults("fcfs")
                .withTenants(Map.of("t", new TenantConfig("t", 1, 0, 4))));
        s.submit(job("p", 3).tenant("t").build(), 0);
        s.submit(job("q", 3).tenant("t").build(), 0);
        s.setBatchPlacer(new Scripted(8, b -> Map.of("p", whole("p", 0, 0, 1, 2), "q", whole("q", 0, 3, 4, 5))));
        assertThat(s.schedule(0).started()).containsExactly("p");
        assertThat(s.job("q").status()).isEqualTo(JobStatus.PENDING);
        s.checkConsistency();
    }

    @Test
    void anUnknownPlacerNameIsAClearError() {
        assertThatThrownBy(() -> BatchPlacers.create("simulated-annealing")).isInstanceOf(SpecException.class)
                .hasMessageContaining("unknown batch placer 'simulated-annealing'");
    }
}
