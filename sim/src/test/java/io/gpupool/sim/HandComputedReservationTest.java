package io.gpupool.sim;

import io.gpupool.engine.SchedulerConfig;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.GpuDevice;
import io.gpupool.model.GpuModel;
import io.gpupool.model.JobSpec;
import io.gpupool.model.NodeSpec;
import io.gpupool.model.SpecException;
import io.gpupool.sim.metrics.JobOutcome;
import io.gpupool.sim.trace.ReservationsFile;
import io.gpupool.sim.trace.TraceJob;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * An advance reservation in the simulator, worked out by hand (seconds; each expectation is "id start finish"). One node
 * of 4 A100s; tenant b reserves all 4 over [100, 200); strict FCFS, so every start below follows from the reservation's two
 * rules and from "a job kept off reserved GPUs blocks nobody":
 * <pre>
 * a1 (a, 4 GPUs, 50 s, limit 60)   t=0:   0+60 <= 100, backfills the reserved GPUs          0..50
 * a2 (a, 4 GPUs, 50 s, limit 100)  t=10:  blocked by a1 (strict: b1 waits behind it)
 *                                  t=50:  50+100 > 100: kept off (skipped, blocks nobody); inside the window not b's,
 *                                  t=200: window over, but b2 holds the GPUs until 250          250..300
 * b1 (b, 2 GPUs, 30 s, no limit)   t=50:  no limit: may not take reserved GPUs before the window
 *                                  t=100: the window starts (a round with no event): b's        100..130
 * a3 (a, 2 GPUs, 10 s, limit 20)   t=55:  55+20 <= 100: backfills                               55..65
 * b2 (b, 4 GPUs, 100 s, no limit)  t=150: b's window, GPUs free since 130; runs past the end    150..250
 * </pre>
 * Without the reservation the same trace runs a2 50..100, b1 and a3 100..130 and 100..110, b2 150..250.
 */
class HandComputedReservationTest {
    private static final GpuModel A100 = GpuCatalog.standard().find("A100-80GB").orElseThrow();

    @TempDir Path dir;

    private static ClusterSpec oneNode(int gpus) {
        List<GpuDevice> devs = IntStream.range(0, gpus).mapToObj(i -> new GpuDevice(i, "GPU-" + i, A100, true)).toList();
        return new ClusterSpec(List.of(new NodeSpec("n0", devs, 96_000, 1 << 20,
                List.of(IntStream.range(0, gpus).boxed().toList()), 1.0, 10, Map.of())));
    }

    private static TraceJob job(String id, String tenant, long submit, long dur, int gpus, UnaryOperator<JobSpec.Builder> more) {
        return new TraceJob(more.apply(JobSpec.builder(id).tenant(tenant).submitSec(submit).gpus(gpus)).build(), dur * 1000);
    }

    private static final List<TraceJob> TRACE = List.of(
            job("a1", "a", 0, 50, 4, b -> b.timeLimitSec(60)),
            job("a2", "a", 10, 50, 4, b -> b.timeLimitSec(100)),
            job("b1", "b", 20, 30, 2, b -> b),
            job("a3", "a", 55, 10, 2, b -> b.timeLimitSec(20)),
            job("b2", "b", 150, 100, 4, b -> b));

    private static List<String> run(List<ReservationsFile.Entry> reservations) {
        Map<String, JobOutcome> byId = new LinkedHashMap<>();
        new Simulator(oneNode(4), SchedulerConfig.defaults("fcfs")).reservations(reservations).onJobDone(o -> byId.put(o.id(), o)).run(TRACE);
        List<String> out = new ArrayList<>();
        for (TraceJob t : TRACE) {
            JobOutcome o = byId.get(t.spec().id());
            out.add(o.id() + " " + o.firstStartMs() / 1000 + " " + o.finishMs() / 1000);
        }
        return out;
    }

    @Test
    void aReservationKeepsItsGpusForItsTenantAcrossTheWindowAndLetsShortJobsBackfillBeforeIt() throws Exception {
        Path file = dir.resolve("reservations.csv");
        Files.writeString(file, "name,tenant,gpus,model,start,end\ndeadline,b,4,a100-80gb,100,200\n");
        assertThat(run(ReservationsFile.read(file, GpuCatalog.standard())))
                .containsExactly("a1 0 50", "a2 250 300", "b1 100 130", "a3 55 65", "b2 150 250");
        assertThat(run(List.of())).as("the same trace without it")
                .containsExactly("a1 0 50", "a2 50 100", "b1 100 130", "a3 100 110", "b2 150 250");
    }

    @Test
    void aReservationTheEngineRefusesStopsTheReplayWithItsLine() throws Exception {
        Path file = dir.resolve("bad.csv");
        Files.writeString(file, "tenant,gpus,model,start,end\nb,2,A100-80GB,100,200\nc,3,A100-80GB,150,250\n");
        List<ReservationsFile.Entry> entries = ReservationsFile.read(file, GpuCatalog.standard());
        assertThatThrownBy(() -> run(entries)).isInstanceOf(SpecException.class)
                .hasMessageContaining(file + ":3: field 'gpus': 3 GPUs of model A100-80GB asked, but only 2");
        Files.writeString(file, "tenant,gpus,model,start,end\nb,2,NoSuchGpu,100,200\n");
        assertThatThrownBy(() -> ReservationsFile.read(file, GpuCatalog.standard())).isInstanceOf(SpecException.class)
                .hasMessageContaining(file + ":2: field 'model'");
    }
}
