package io.gpupool.agent.node;

import io.gpupool.agent.gpu.FakeGpuBackend;
import io.gpupool.agent.link.DesiredState;
import io.gpupool.agent.run.GrantedGpu;
import io.gpupool.agent.run.JobLaunch;
import io.gpupool.agent.run.JobPhase;
import io.gpupool.agent.run.JobRunner;
import io.gpupool.agent.run.RunnerConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Background starts (the running loop's mode): a desired state can arrive while the starts of the previous
 * one are still queued. Here the spawning threads are held back, so that moment is certain.
 */
class ReconcilerTest {

    @TempDir
    Path work;

    /** Holds submitted starts until {@link #release()}, then runs them on the caller's thread. */
    static final class HeldStarts extends AbstractExecutorService {
        private final List<Runnable> held = new ArrayList<>();
        private boolean shutdown;

        @Override
        public synchronized void execute(Runnable r) {
            held.add(r);
        }

        void release() {
            List<Runnable> now;
            synchronized (this) {
                now = List.copyOf(held);
                held.clear();
            }
            now.forEach(Runnable::run);
        }

        synchronized int queued() {
            return held.size();
        }

        @Override
        public synchronized void shutdown() {
            shutdown = true;
        }

        @Override
        public List<Runnable> shutdownNow() {
            shutdown();
            return List.of();
        }

        @Override
        public synchronized boolean isShutdown() {
            return shutdown;
        }

        @Override
        public boolean isTerminated() {
            return isShutdown();
        }

        @Override
        public boolean awaitTermination(long timeout, TimeUnit unit) {
            return true;
        }
    }

    final HeldStarts starts = new HeldStarts();
    JobRunner runner;

    @AfterEach
    void stopJobs() throws Exception {
        if (runner != null) {
            runner.stopAll("test over", Duration.ofSeconds(5));
            runner.close();
        }
    }

    @Test
    void anAttemptDroppedWhileItsStartIsQueuedNeverRunsAndFreesItsGpuForTheNext() throws Exception {
        FakeGpuBackend gpus = new FakeGpuBackend("2xA100-80GB", "n1");
        AgentState state = new AgentState(work);
        StatusBuffer statuses = new StatusBuffer(work);
        Reconciler reconciler = new Reconciler(statuses, new LogShipper(new io.gpupool.agent.run.JobStore(work), state), state,
                Runnable::run, starts);
        runner = new JobRunner(RunnerConfig.defaults(work).withKillGrace(Duration.ofMillis(300)), gpus.discover().gpus(), reconciler);
        reconciler.attach(runner);
        String gpu0 = gpus.discover().gpus().get(0).uuid();
        String gpu1 = gpus.discover().gpus().get(1).uuid();
        JobLaunch dropped = job("dropped", GrantedGpu.whole(gpu0));
        JobLaunch kept = job("kept", new GrantedGpu(gpu1, 500, 1024));
        JobLaunch next = job("next", GrantedGpu.whole(gpu0));

        assertThat(reconciler.apply(new DesiredState(1, List.of(dropped, kept)), false).started()).hasSize(2);
        assertThat(starts.queued()).isEqualTo(2);
        assertThat(runner.running()).isEmpty();

        // the server moved GPU 0 to another job before the first start ran
        Reconciler.Applied second = reconciler.apply(new DesiredState(2, List.of(kept, next)), false);
        assertThat(second.started()).isEmpty(); // kept is already on its way: not queued twice
        assertThat(second.waiting()).containsOnlyKeys(next.key()); // GPU 0 counts as held by the queued start

        starts.release(); // dropped is skipped, kept spawns; the freed GPU lets next be queued
        assertThat(runner.store().started(dropped.key())).isFalse();
        assertThat(runner.running()).extracting(j -> j.key().jobId()).containsExactly("kept");
        assertThat(starts.queued()).isEqualTo(1);
        starts.release();
        assertThat(runner.running()).extracting(j -> j.key().jobId()).containsExactlyInAnyOrder("kept", "next");
        assertThat(statuses.pending(100)).filteredOn(s -> s.phase() == JobPhase.RUNNING)
                .extracting(s -> s.jobId()).containsExactlyInAnyOrder("kept", "next");
    }

    private static JobLaunch job(String id, GrantedGpu gpu) {
        return new JobLaunch(id, 0, List.of("sleep", "30"), Map.of(), null, List.of(gpu));
    }
}
