package io.gpupool.sim.trace;

import io.gpupool.model.ClusterSpec;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.HostResources;
import io.gpupool.model.SpecException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The three file formats: what they read, in which order, and how they refuse bad rows. */
class TraceReadersTest {
    @TempDir Path dir;

    private Path file(String name, String... lines) throws IOException {
        Path p = dir.resolve(name);
        Files.writeString(p, String.join("\n", lines) + "\n");
        return p;
    }

    private static List<TraceJob> all(Trace t) {
        List<TraceJob> out = new ArrayList<>();
        try (Trace.Cursor c = t.open()) {
            while (c.hasNext()) out.add(c.next());
        }
        return out;
    }

    private static TraceFile open(Path p, String format, boolean skip) {
        return TraceFile.open(p, TraceFormats.get(format), TraceContext.standard(), skip);
    }

    // ---- gpupool CSV ----------------------------------------------------------------------------

    @Test
    void gpupoolCsvReadsEveryColumnAndReplaysInSubmitOrderKeepingTiesInFileOrder() throws IOException {
        Path p = file("t.csv",
                "\uFEFFjob_id,submit_time,duration,num_gpus,gpu_milli,gpu_mem_mib,gpu_type,tenant,user,priority,name,extra",
                "late,30,10,1,500,4096,V100M32|t4,team-a,ann,5,eval,ignored",
                "big,0,3600.5,16,,,,team-b,bob,,train,",
                "tie1,10,1,1,,,,,,,,",
                "",
                "tie2,10,1,2,,,,,,,,");
        TraceFile t = open(p, "gpupool", false);
        assertThat(t.stats().jobs()).isEqualTo(4);
        List<TraceJob> jobs = all(t);
        assertThat(jobs).extracting(j -> j.spec().id()).containsExactly("big", "tie1", "tie2", "late");
        TraceJob late = jobs.get(3);
        assertThat(late.spec().submitTimeMs()).isEqualTo(30_000);
        assertThat(late.durationMs()).isEqualTo(10_000);
        assertThat(late.spec().share().milli()).isEqualTo(500);
        assertThat(late.spec().share().memoryMib()).isEqualTo(4096);
        assertThat(late.spec().allowedModels()).isEqualTo(Set.of("V100-32GB", "T4"));
        assertThat(late.spec().tenant()).isEqualTo("team-a");
        assertThat(late.spec().user()).isEqualTo("ann");
        assertThat(late.spec().priority()).isEqualTo(5);
        assertThat(late.spec().name()).isEqualTo("eval");
        // 16 GPUs on 8-GPU nodes: two replicas of 8
        assertThat(jobs.getFirst().spec().shape().toString()).isEqualTo("2x8");
        assertThat(jobs.getFirst().durationMs()).isEqualTo(3_600_500);
        // a second pass gives the same jobs again
        assertThat(all(t)).extracting(j -> j.spec().id()).containsExactly("big", "tie1", "tie2", "late");
    }

    @Test
    void aMalformedRowStopsTheRunWithFileLineColumnAndRule() throws IOException {
        Path p = file("bad.csv", "job_id,submit_time,duration,num_gpus", "a,0,10,1", "b,5,-3,1", "c,x,1,1");
        assertThatThrownBy(() -> open(p, "gpupool", false)).isInstanceOf(SpecException.class)
                .hasMessage(p + ":3: field 'duration': must be >= 0.001, got -3");
        Path q = file("bad2.csv", "job_id,submit_time,duration,num_gpus", "a,0,10,two");
        assertThatThrownBy(() -> open(q, "gpupool", false)).hasMessage(q + ":2: field 'num_gpus': must be an integer, got 'two'");
        Path r = file("bad3.csv", "job_id,submit_time,duration,num_gpus,gpu_type", "a,0,10,1,Z80");
        assertThatThrownBy(() -> open(r, "gpupool", false)).hasMessageStartingWith(r + ":2: field 'gpu_type': unknown GPU model 'Z80'");
        Path s = file("bad4.csv", "job_id,submit_time,duration,num_gpus,gpu_milli", "a,0,10,2,500");
        assertThatThrownBy(() -> open(s, "gpupool", false)).isInstanceOfSatisfying(SpecException.class, e -> {
            assertThat(e.where()).isEqualTo(s + ":2");
            assertThat(e.field()).isEqualTo("gpu_milli");
        });
        Path m = file("bad5.csv", "job_id,submit_time,duration,num_gpus,gpu_mem_mib", "a,0,10,2,4096");
        assertThatThrownBy(() -> open(m, "gpupool", false)).isInstanceOfSatisfying(SpecException.class, e -> assertThat(e.field()).isEqualTo("gpu_mem_mib"));
        Path z = file("bad6.csv", "job_id,submit_time,duration,num_gpus,gpu_milli", "a,0,10,1,0");
        assertThatThrownBy(() -> open(z, "gpupool", false)).isInstanceOfSatisfying(SpecException.class, e -> assertThat(e.field()).isEqualTo("gpu_milli"));
    }

    @Test
    void aRuleTheJobItselfEnforcesIsToldAtTheRowWithItsFieldAndRule() {
        // a row the format passes but the job refuses (no GPU and no host request): restated at file:line, not nested
        Row row = new Row("t.csv", 7, Row.split("a,0,10,0"), new Columns("job_id,submit_time,duration,num_gpus", "t.csv:1"));
        assertThatThrownBy(() -> GpupoolCsvFormat.build(row, io.gpupool.model.JobSpec.builder("a").shape(new io.gpupool.model.GangShape(1, 0)), 10))
                .isInstanceOfSatisfying(SpecException.class, e -> {
                    assertThat(e.where()).isEqualTo("t.csv:7");
                    assertThat(e.field()).isEqualTo("num_gpus");
                    assertThat(e.rule()).doesNotContain("job a").doesNotContain("field '");
                });
    }

    @Test
    void aMissingColumnOrAnEmptyFileNamesTheHeader() throws IOException {
        Path p = file("h.csv", "job_id,submit,duration,num_gpus", "a,0,10,1");
        assertThatThrownBy(() -> open(p, "gpupool", false))
                .hasMessage(p + ":1: field 'submit_time': required column missing; header is 'job_id,submit,duration,num_gpus'");
        Path e = file("e.csv", "");
        assertThatThrownBy(() -> open(e, "gpupool", false)).hasMessageStartingWith(e + ":1: empty trace");
    }

    @Test
    void skipBadRowsCountsThemAndKeepsTheRest() throws IOException {
        Path p = file("skip.csv", "job_id,submit_time,duration,num_gpus", "a,0,10,1", "b,5,-3,1", "c,x,1,1", "d,1,1,1");
        TraceFile t = open(p, "gpupool", true);
        assertThat(t.stats().skippedRows()).isEqualTo(2);
        assertThat(t.stats().firstSkipped()).containsExactly(p + ":3: field 'duration': must be >= 0.001, got -3",
                p + ":4: field 'submit_time': must be a number, got 'x'");
        assertThat(all(t)).extracting(j -> j.spec().id()).containsExactly("a", "d");
    }

    @Test
    void duplicateJobIdsAreRefusedNamingBothLines() throws IOException {
        Path p = file("dup.csv", "job_id,submit_time,duration,num_gpus", "a,0,10,1", "b,0,10,1", "a,5,10,1");
        assertThatThrownBy(() -> open(p, "gpupool", false)).hasMessage(p + ":4: field 'job_id': duplicate job id 'a' (first on line 2)");
        TraceFile skipped = open(p, "gpupool", true);
        assertThat(skipped.stats().skippedRows()).isEqualTo(1);
        assertThat(all(skipped)).extracting(j -> j.spec().id()).containsExactly("a", "b");
    }

    @Test
    void idHashesNeverMistakeDifferentIdsForDuplicates() {
        // the index compares 64-bit hashes of ids first; different ids of a realistic trace never collide
        java.util.Set<Long> seen = new java.util.HashSet<>();
        for (int i = 0; i < 200_000; i++) assertThat(seen.add(TraceFile.hash64("job-" + i))).isTrue();
    }

    // ---- Philly ---------------------------------------------------------------------------------

    @Test
    void phillyTimesCountFromTheEarliestSubmitAndTheVirtualClusterIsTheTenant() throws IOException {
        Path p = file("philly.csv",
                "timestamp,duration,num_gpus,gpu_time,cluster",
                "2017-10-09 07:01:55,66.0,1,66.0,11cb48",
                "2017-10-09 06:13:03,2951.0,8,23608.0,6214e9",
                "2017-10-10 06:13:03,10,16,160,6214e9");
        List<TraceJob> jobs = all(open(p, "philly", false));
        assertThat(jobs).extracting(j -> j.spec().id()).containsExactly("philly-3", "philly-2", "philly-4");
        assertThat(jobs).extracting(j -> j.spec().submitTimeMs()).containsExactly(0L, (48 * 60 + 52) * 1000L, 86_400_000L);
        assertThat(jobs).extracting(j -> j.spec().tenant()).containsExactly("6214e9", "11cb48", "6214e9");
        assertThat(jobs.getFirst().durationMs()).isEqualTo(2_951_000);
        assertThat(jobs.get(2).spec().shape().toString()).isEqualTo("2x8");
    }

    @Test
    void phillyRefusesImpossibleTimestamps() throws IOException {
        Path p = file("philly-bad.csv", "timestamp,duration,num_gpus,gpu_time,cluster", "2017-02-30 00:00:00,1,1,1,x");
        assertThatThrownBy(() -> open(p, "philly", false))
                .hasMessage(p + ":2: field 'timestamp': must be a time YYYY-MM-DD HH:MM:SS, got '2017-02-30 00:00:00'");
        Path q = file("philly-bad2.csv", "timestamp,duration,num_gpus,gpu_time,cluster", "2017-10-09 7:01:55,1,1,1,x");
        assertThatThrownBy(() -> open(q, "philly", false)).hasMessageContaining(":2: field 'timestamp'");
    }

    @Test
    void epochDaysAgreeWithJavaTime() {
        for (java.time.LocalDate d = java.time.LocalDate.of(1999, 12, 1); d.isBefore(java.time.LocalDate.of(2030, 3, 2)); d = d.plusDays(1)) {
            assertThat(PhillyFormat.epochDay(d.getYear(), d.getMonthValue(), d.getDayOfMonth())).isEqualTo(d.toEpochDay());
        }
    }

    // ---- Alibaba openb --------------------------------------------------------------------------

    @Test
    void openbPodsShareGpusKeepTypeConstraintsAndLeaveOutWhatNeverRanOnAGpu() throws IOException {
        Path p = file("pods.csv",
                "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time",
                "pod-a,12000,16384,1,460,,LS,Running,100,400,110",
                "pod-b,6000,12288,0,0,,LS,Running,0,50,0",
                "pod-c,6000,12288,8,1000,V100M16|V100M32,BE,Running,0,1000,0",
                "pod-d,6000,12288,1,1000,G2,BE,Pending,10,20,",
                "pod-e,6000,12288,1,1000,P100|T4|A10|G3,BE,Succeeded,20,30,25");
        TraceFile t = open(p, "openb", false);
        assertThat(t.stats().ignored()).containsEntry("CPU-only pod (num_gpu 0)", 1L)
                .containsEntry("never scheduled in the original cluster (no scheduled_time)", 1L);
        List<TraceJob> jobs = all(t);
        assertThat(jobs).extracting(j -> j.spec().id()).containsExactly("pod-c", "pod-e", "pod-a");
        TraceJob a = jobs.get(2);
        assertThat(a.spec().share().milli()).isEqualTo(460);
        assertThat(a.spec().submitTimeMs()).isEqualTo(100_000);
        assertThat(a.durationMs()).isEqualTo(290_000);
        assertThat(jobs.getFirst().spec().allowedModels()).isEqualTo(Set.of("V100-16GB", "V100-32GB"));
        assertThat(jobs.getFirst().spec().shape().toString()).isEqualTo("1x8");
        assertThat(jobs.get(1).spec().allowedModels()).isEqualTo(Set.of("P100", "T4", "A10", "G3"));
    }

    @Test
    void openbRulesForMultiGpuTasksAndTimes() throws IOException {
        String head = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time";
        Path p = file("pods-bad.csv", head, "pod-a,1,1,2,500,,LS,Running,0,10,0");
        assertThatThrownBy(() -> open(p, "openb", false)).isInstanceOfSatisfying(SpecException.class, e -> {
            assertThat(e.where()).isEqualTo(p + ":2");
            assertThat(e.field()).isEqualTo("gpu_milli");
        });
        Path z = file("pods-bad0.csv", head, "pod-a,1,1,1,0,,LS,Running,0,10,0");
        assertThatThrownBy(() -> open(z, "openb", false)).isInstanceOfSatisfying(SpecException.class, e -> assertThat(e.field()).isEqualTo("gpu_milli"));
        Path q = file("pods-bad2.csv", head, "pod-a,1,1,1,500,,LS,Running,0,10,10");
        assertThatThrownBy(() -> open(q, "openb", false))
                .hasMessage(q + ":2: field 'deletion_time': must be after scheduled_time 10, got 10");
        // the inflation study reads the demand only: no time columns needed
        Path r = file("shapes.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli", "pod-a,1,1,1,500", "pod-b,1,1,0,0");
        TraceFile shapes = TraceFile.open(r, OpenbFormat.shapesOnly(), TraceContext.standard(), false);
        assertThat(all(shapes)).singleElement().satisfies(j -> assertThat(j.spec().share().milli()).isEqualTo(500));
        assertThatThrownBy(() -> open(r, "openb", false)).hasMessageContaining("field 'creation_time': required column missing");
    }

    @Test
    void openbHostCpuAndMemoryBecomeTheJobsHostRequestWhereThePoolDeclaresHostCapacity() throws IOException {
        String head = "name,cpu_milli,memory_mib,num_gpu,gpu_milli";
        Path p = file("pods-host.csv", head, "pod-a,12000,16384,1,460", "pod-b,88000,393216,8,1000", "pod-c,,,1,1000",
                "cpu-d,4000,8192,0,0", "cpu-e,0,0,0,0");
        Path nodes = file("nodes-host.csv", "sn,cpu_milli,memory_mib,gpu,model", "n0,96000,393216,8,G2");
        TraceContext withHost = TraceContext.forPool(GpuCatalog.standard(), OpenbNodeList.read(nodes, GpuCatalog.standard()));
        assertThat(withHost.hostResources()).isTrue();
        TraceFile withHostFile = TraceFile.open(p, OpenbFormat.shapesOnly(), withHost, false);
        List<TraceJob> jobs = all(withHostFile);
        assertThat(jobs).extracting(j -> j.spec().host()).containsExactly(
                new HostResources(12_000, 16_384), new HostResources(88_000, 393_216), HostResources.NONE, new HostResources(4_000, 8_192));
        // the inflation study's CPU-only task: no GPU, the pod's host request; one asking for nothing is left out
        assertThat(jobs.getLast().spec().cpuOnly()).isTrue();
        assertThat(jobs.getLast().spec().gpuMilliDemand()).isZero();
        assertThat(withHostFile.stats().ignored()).containsExactly(java.util.Map.entry("CPU-only pod asking for no CPU or memory", 1L));
        // a context that does not declare host capacity (or --ignore-host) reads GPUs only, and leaves CPU-only pods out
        TraceFile gpusOnly = TraceFile.open(p, OpenbFormat.shapesOnly(), TraceContext.standard(), false);
        assertThat(all(gpusOnly)).extracting(j -> j.spec().host()).containsExactly(HostResources.NONE, HostResources.NONE, HostResources.NONE);
        assertThat(gpusOnly.stats().ignored()).containsEntry("CPU-only pod (num_gpu 0; host CPU and memory not modelled)", 2L);
        // a replay leaves CPU-only pods out even where host resources are read (it measures GPU jobs)
        Path timed = file("pods-host-timed.csv", head + ",creation_time,deletion_time,scheduled_time",
                "pod-a,12000,16384,1,460,0,10,0", "cpu-d,4000,8192,0,0,0,10,0");
        TraceFile replay = TraceFile.open(timed, new OpenbFormat(), withHost, false);
        assertThat(all(replay)).singleElement().satisfies(j -> assertThat(j.spec().id()).isEqualTo("pod-a"));
        assertThat(replay.stats().ignored()).containsEntry("CPU-only pod (num_gpu 0)", 1L);
        Path noHost = file("nodes-nohost.csv", "sn,cpu_milli,memory_mib,gpu,model", "n0,96000,393216,8,G2", "n1,0,0,2,T4");
        assertThat(TraceContext.forPool(GpuCatalog.standard(), OpenbNodeList.read(noHost, GpuCatalog.standard())).hostResources()).isFalse();
    }

    @Test
    void openbNodeListIsAHeterogeneousPoolWithTheCatalogsAliases() throws IOException {
        Path p = file("nodes.csv", "sn,cpu_milli,memory_mib,gpu,model",
                "n0,64000,262144,2,P100", "n1,96000,786432,8,V100M32", "n2,96000,786432,8,G2", "cpu,32000,1000,0,", "n3,1,1,1,A10");
        ClusterSpec c = OpenbNodeList.read(p, GpuCatalog.standard());
        assertThat(c.nodes()).extracting(n -> n.name()).containsExactly("n0", "n1", "n2", "n3");
        assertThat(c.nodes()).extracting(n -> n.gpus().getFirst().model().id()).containsExactly("P100", "V100-32GB", "G2", "A10");
        assertThat(c.totalGpus()).isEqualTo(19);
        // V100 x8: DGX-1 hybrid cube-mesh, two NVLink quads; P100 PCIe: none
        assertThat(c.nodes().get(1).nvlinkDomains()).hasSize(2);
        assertThat(c.nodes().getFirst().nvlinkDomains()).isEmpty();
        Path bad = file("nodes-bad.csv", "sn,cpu_milli,memory_mib,gpu,model", "n0,1,1,2,K80");
        assertThatThrownBy(() -> OpenbNodeList.read(bad, GpuCatalog.standard()))
                .hasMessageStartingWith(bad + ":2: field 'model': unknown GPU model 'K80'");
    }

    @Test
    void unknownFormatNamesTheKnownOnes() {
        assertThatThrownBy(() -> TraceFormats.get("swf")).hasMessageContaining("unknown format 'swf'; supported: gpupool, philly, openb");
    }
}
