package io.gpupool.sim.trace;

import io.gpupool.model.ClusterSpec;
import io.gpupool.model.GpuCatalog;
import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** The real public traces read end to end (skipped where they are absent: {@link SharedTraces}). */
class SharedTracesTest {

    @Test
    void phillyJobTable() {
        TraceFile t = TraceFile.open(SharedTraces.require("philly/philly_jobs.csv"), new PhillyFormat(), TraceContext.standard(), false);
        assertThat(t.stats().jobs()).isEqualTo(82_247);
        assertThat(t.stats().skippedRows()).isZero();
        long last = -1, first = Long.MAX_VALUE;
        double gpuHours = 0;
        Set<String> tenants = new HashSet<>();
        try (Trace.Cursor c = t.open()) {
            while (c.hasNext()) {
                TraceJob j = c.next();
                assertThat(j.spec().submitTimeMs()).isGreaterThanOrEqualTo(last);
                last = j.spec().submitTimeMs();
                first = Math.min(first, last);
                tenants.add(j.spec().tenant());
                gpuHours += j.spec().totalGpus() * j.durationMs() / 3.6e6;
            }
        }
        assertThat(first).isZero();
        // 2017-09-04 .. 2017-12-22 (the README of the traces): about 109 days of submissions
        assertThat(last / 86_400_000.0).isBetween(100.0, 110.0);
        assertThat(tenants).hasSize(15);
        assertThat(gpuHours).isBetween(950_000.0, 1_000_000.0);
    }

    @Test
    void openbDefaultPodsAndNodes() {
        TraceFile pods = TraceFile.open(SharedTraces.require("alibaba-openb/openb_pod_list_default.csv"), new OpenbFormat(), TraceContext.standard(), false);
        assertThat(pods.stats().rows()).isEqualTo(8_152);
        assertThat(pods.stats().ignored()).containsEntry("CPU-only pod (num_gpu 0)", 1_088L);
        assertThat(pods.stats().jobs() + pods.stats().ignoredRows()).isEqualTo(8_152);
        ClusterSpec nodes = OpenbNodeList.read(SharedTraces.require("alibaba-openb/openb_node_list_gpu_node.csv"), GpuCatalog.standard());
        assertThat(nodes.nodes()).hasSize(1_213);
        assertThat(nodes.totalGpus()).isEqualTo(6_212);
        assertThat(nodes.nodes().stream().map(n -> n.gpus().getFirst().model().id()).distinct().sorted())
                .containsExactly("A10", "G2", "G3", "P100", "T4", "V100-16GB", "V100-32GB");
        // the inflation study on this pool (host capacity declared) draws the CPU-only pods too
        TraceFile tasks = TraceFile.open(SharedTraces.require("alibaba-openb/openb_pod_list_default.csv"), OpenbFormat.shapesOnly(),
                TraceContext.forPool(GpuCatalog.standard(), nodes), false);
        long cpuOnly = 0, all = 0;
        try (Trace.Cursor c = tasks.open()) {
            for (; c.hasNext(); all++) if (c.next().spec().cpuOnly()) cpuOnly++;
        }
        assertThat(all).isEqualTo(8_152);
        assertThat(cpuOnly).isEqualTo(1_088);
        assertThat(tasks.stats().ignoredRows()).isZero();
    }

    @Test
    void openbTypeConstrainedVariantResolvesEveryModelCode() {
        TraceFile pods = TraceFile.open(SharedTraces.require("alibaba-openb/openb_pod_list_gpuspec33.csv"), OpenbFormat.shapesOnly(), TraceContext.standard(), false);
        long constrained = 0;
        try (Trace.Cursor c = pods.open()) {
            while (c.hasNext()) if (!c.next().spec().allowedModels().isEmpty()) constrained++;
        }
        // no host capacity declared: the CPU-only pods ask for nothing and are left out
        assertThat(pods.stats().jobs()).isEqualTo(8_152 - 1_088);
        assertThat(pods.stats().ignored()).containsEntry("CPU-only pod (num_gpu 0; host CPU and memory not modelled)", 1_088L);
        assertThat(constrained).isGreaterThan(2_000);
    }
}
