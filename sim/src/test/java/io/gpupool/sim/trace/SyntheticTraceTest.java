package io.gpupool.sim.trace;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The generator: seeded, streaming, and shaped like the published Helios statistics. */
class SyntheticTraceTest {
    private static final int JOBS = 200_000;

    private static List<TraceJob> jobs(SyntheticTrace t) {
        List<TraceJob> out = new ArrayList<>();
        try (Trace.Cursor c = t.open()) {
            while (c.hasNext()) out.add(c.next());
        }
        return out;
    }

    private static SyntheticTrace trace(long seed, int jobs) {
        return new SyntheticTrace(new SyntheticTrace.Params(seed, jobs, 0.8, 1024, 6, 0.2));
    }

    @Test
    void theSameSeedGivesTheSameTraceAndSubmitTimesNeverGoBack() {
        List<TraceJob> a = jobs(trace(7, 2000)), b = jobs(trace(7, 2000)), c = jobs(trace(8, 2000));
        assertThat(a).isEqualTo(b);
        assertThat(a).isNotEqualTo(c);
        for (int i = 1; i < a.size(); i++) assertThat(a.get(i).spec().submitTimeMs()).isGreaterThanOrEqualTo(a.get(i - 1).spec().submitTimeMs());
    }

    /** Per-cluster statistics of GPU jobs in Helios (SC'21): the generator must fall inside their range. */
    private record Range(double min, double max) {
        boolean contains(double v) { return v >= min && v <= max; }
    }

    private static Range column(List<String[]> rows, List<String> head, String name) {
        int i = head.indexOf(name);
        double[] v = rows.stream().mapToDouble(r -> Double.parseDouble(r[i])).toArray();
        return new Range(Arrays.stream(v).min().orElseThrow(), Arrays.stream(v).max().orElseThrow());
    }

    @Test
    void distributionsFallInsideTheRangeOfTheHeliosClusters() throws IOException {
        List<String> lines = Files.readAllLines(SharedTraces.require("helios/helios_cluster_summary.csv"));
        List<String> head = List.of(lines.getFirst().split(","));
        // the four clusters (the file also has a "total" row)
        List<String[]> rows = lines.stream().skip(1).filter(l -> !l.isBlank() && !l.startsWith("total,")).map(l -> l.split(",")).toList();
        assertThat(rows).hasSize(4);

        SyntheticTrace t = trace(42, JOBS);
        List<TraceJob> jobs = jobs(t);
        double[] run = jobs.stream().mapToDouble(j -> j.durationMs() / 1000.0).sorted().toArray();
        double[] gpus = jobs.stream().mapToDouble(j -> j.spec().totalGpus()).sorted().toArray();
        double medianRun = run[run.length / 2], meanRun = Arrays.stream(run).average().orElseThrow();
        double medianGpus = gpus[gpus.length / 2], meanGpus = Arrays.stream(gpus).average().orElseThrow();

        assertThat(column(rows, head, "med_run_time_gpu").contains(medianRun)).as("median run %.0f s in %s", medianRun, column(rows, head, "med_run_time_gpu")).isTrue();
        assertThat(column(rows, head, "avg_run_time_gpu").contains(meanRun)).as("mean run %.0f s in %s", meanRun, column(rows, head, "avg_run_time_gpu")).isTrue();
        assertThat(column(rows, head, "avg_gpu_num").contains(meanGpus)).as("mean GPUs %.2f in %s", meanGpus, column(rows, head, "avg_gpu_num")).isTrue();
        assertThat(medianGpus).isEqualTo(column(rows, head, "med_gpu_num").max());

        // the offered load is what was asked for (GPU-time demanded over GPU-time of 1024 GPUs while jobs arrive)
        double span = jobs.getLast().spec().submitTimeMs() / 1000.0;
        double demand = jobs.stream().mapToDouble(j -> j.spec().gpuMilliDemand() / 1000.0 * j.durationMs() / 1000.0).sum();
        assertThat(demand / (1024 * span)).isCloseTo(0.8, org.assertj.core.data.Percentage.withPercentage(10));

        // diurnal: more arrivals in the afternoon than at night
        long afternoon = jobs.stream().filter(j -> hour(j) >= 12 && hour(j) < 16).count();
        long night = jobs.stream().filter(j -> hour(j) >= 0 && hour(j) < 4).count();
        assertThat(afternoon).isGreaterThan(night * 2);
    }

    private static double hour(TraceJob j) {
        return (j.spec().submitTimeMs() / 3_600_000.0) % 24;
    }

    @Test
    void jobsLargerThanThePoolAreNotGenerated() {
        SyntheticTrace small = new SyntheticTrace(new SyntheticTrace.Params(1, 5000, 0.9, 8, 3, 0.3));
        assertThat(jobs(small)).allSatisfy(j -> assertThat(j.spec().totalGpus()).isLessThanOrEqualTo(8));
        assertThat(jobs(small)).extracting(j -> j.spec().tenant()).containsOnly("team-a", "team-b", "team-c");
    }
}
