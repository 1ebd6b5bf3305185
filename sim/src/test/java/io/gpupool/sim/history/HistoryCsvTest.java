package io.gpupool.sim.history;

import io.gpupool.engine.SchedulerConfig;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.ClusterSpecs;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.JobSpec;
import io.gpupool.model.SpecException;
import io.gpupool.sim.Simulator;
import io.gpupool.sim.metrics.ResultFormat;
import io.gpupool.sim.metrics.SimulationResult;
import io.gpupool.sim.trace.GpupoolCsvFormat;
import io.gpupool.sim.trace.Trace;
import io.gpupool.sim.trace.TraceContext;
import io.gpupool.sim.trace.TraceFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/**
 * The history CSV: the exact text written for a known set of jobs, read back to the same jobs and records, refused
 * with file:line where the record is malformed; its record columns change nothing in a replay; and the record's own
 * row (the recorded waits, JCTs and GPU-time) computed by the simulator's metric code.
 */
class HistoryCsvTest {
    private static final long ORIGIN = 1_796_000_000_000L;   // 2026-11-30T00:53:20Z
    private static final ClusterSpec POOL = ClusterSpecs.parse("1x8:A100-80GB,1x4:T4", GpuCatalog.standard());
    @TempDir Path dir;

    private static RecordedJob.Run run(long startMs, long endMs, String node, Integer... gpus) {
        return new RecordedJob.Run(startMs, endMs, List.of(new RecordedJob.NodeGpus(node, List.of(gpus))));
    }

    /** Jobs of every kind the service runs: a gang, a share with memory, models, an array task, limits, a requeue. */
    static List<RecordedJob> jobs() {
        JobSpec gang = JobSpec.builder("j1").tenant("vision").user("ann").name("train, \"big\"").submitMs(0).shape(2, 4)
                .allowedModels(Set.of("A100-80GB")).requireNvlink(true).host(8000, 65536).timeLimitSec(3600).build();
        JobSpec share = JobSpec.builder("j2").tenant("nlp").user("bob").submitMs(1500).gpus(1).milli(250)
                .share(new io.gpupool.model.GpuShare(250, 8000)).priority(5).estimateMs(90_500).preemptible(false).build();
        JobSpec task = JobSpec.builder("j3_0").tenant("nlp").user("nlp").submitMs(2000).gpus(1).build();
        JobSpec requeued = JobSpec.builder("j4").tenant("research").submitMs(2000).gpus(1).allowedModels(Set.of("T4", "A100-80GB")).build();
        return List.of(
                RecordedJob.of(gang, null, 0, "SUCCEEDED", List.of(run(40, 60_040, "a100-80gb-0000", 0, 1, 2, 3, 4, 5, 6, 7))),
                RecordedJob.of(share, null, 0, "FAILED", List.of(run(60_040, 70_540, "a100-80gb-0000", 3))),
                RecordedJob.of(task, "j3", 2, "CANCELLED", List.of(run(2_001, 5_000, "t4-0000", 1))),
                RecordedJob.of(requeued, null, 0, "TIMEOUT", List.of(run(2_001, 3_000, "t4-0000", 2), run(4_000, 9_500, "t4-0000", 0))));
    }

    @Test
    void theCsvOfAKnownSetOfJobsIsExactlyThisAndReadsBackToTheSameJobs() throws Exception {
        String csv = HistoryCsv.write(jobs(), ORIGIN);
        assertThat(csv).isEqualTo("""
                job_id,submit_time,duration,num_gpus,gpu_milli,gpu_mem_mib,gpu_type,tenant,user,priority,name,replicas,preemptible,require_nvlink,\
                cpu_milli,host_mem_mib,estimate,time_limit,array_id,array_cap,submitted_at,recorded_state,recorded_start,recorded_end,recorded_wait,recorded_runs
                j1,0,60,8,1000,0,A100-80GB,vision,ann,0,"train, ""big""\",2,true,true,8000,65536,,3600,,,2026-11-30T00:53:20Z,SUCCEEDED,0.04,60.04,0.04,\
                0.04-60.04@a100-80gb-0000:0+1+2+3+4+5+6+7
                j2,1.5,10.5,1,250,8000,,nlp,bob,5,,1,false,false,0,0,90.5,,,,2026-11-30T00:53:21.500Z,FAILED,60.04,70.54,58.54,60.04-70.54@a100-80gb-0000:3
                j3_0,2,2.999,1,1000,0,,nlp,nlp,0,,1,true,false,0,0,,,j3,2,2026-11-30T00:53:22Z,CANCELLED,2.001,5,0.001,2.001-5@t4-0000:1
                j4,2,5.5,1,1000,0,A100-80GB|T4,research,research,0,,1,true,false,0,0,,,,,2026-11-30T00:53:22Z,TIMEOUT,2.001,9.5,1.001,\
                2.001-3@t4-0000:2|4-9.5@t4-0000:0
                """);
        Path file = dir.resolve("history.csv");
        Files.writeString(file, csv);
        List<RecordedJob> back = HistoryCsv.read(file, TraceContext.forPool(GpuCatalog.standard(), POOL));
        // the file is sorted by submit time again on reading (j3_0 and j4 tie, and keep file order)
        assertThat(back).containsExactlyElementsOf(jobs());
    }

    @Test
    void aMalformedRecordIsRefusedWithFileLineAndColumn() throws Exception {
        String header = String.join(",", HistoryCsv.COLUMNS);
        Path noRecord = dir.resolve("plain.csv");
        Files.writeString(noRecord, "job_id,submit_time,duration,num_gpus\na,0,10,1\n");
        assertThatThrownBy(() -> HistoryCsv.read(noRecord, TraceContext.standard())).isInstanceOf(SpecException.class)
                .hasMessageStartingWith(noRecord + ":1: field 'recorded_state': required column missing");
        Path garbled = dir.resolve("garbled.csv");
        Files.writeString(garbled, header + "\n" + "a,0,10,1,1000,0,,t,t,0,,1,true,false,0,0,,,,,x,SUCCEEDED,0,10,0,0-10@n1:0\n"
                + "b,0,10,1,1000,0,,t,t,0,,1,true,false,0,0,,,,,x,SUCCEEDED,0,10,0,10 to 20 on n1\n");
        assertThatThrownBy(() -> HistoryCsv.read(garbled, TraceContext.standard()))
                .hasMessage(garbled + ":3: field 'recorded_runs': each run is START-END@NODE:GPU[+GPU...][/NODE:GPU...] (seconds), got '10 to 20 on n1'");
        Path early = dir.resolve("early.csv");
        Files.writeString(early, header + "\n" + "a,5,10,2,1000,0,,t,t,0,,1,true,false,0,0,,,,,x,SUCCEEDED,0,10,0,4-10@n1:0+1\n");
        assertThatThrownBy(() -> HistoryCsv.read(early, TraceContext.standard()))
                .hasMessage(early + ":2: field 'recorded_runs': run 1 starts before the job's submission");
        Path missing = dir.resolve("missing.csv");
        assertThatThrownBy(() -> HistoryCsv.read(missing, TraceContext.standard())).hasMessageContaining("no such file");
    }

    @Test
    void theRecordColumnsChangeNothingInAReplayOfTheTrace() throws Exception {
        String csv = HistoryCsv.write(jobs(), ORIGIN);
        Path with = dir.resolve("with.csv");
        Files.writeString(with, csv);
        // the same jobs without the record's columns (and without submitted_at)
        StringBuilder plain = new StringBuilder();
        for (String line : csv.split("\n")) {
            String[] cells = split(line);
            plain.append(String.join(",", java.util.Arrays.stream(cells, 0, HistoryCsv.COLUMNS.indexOf("submitted_at"))
                    .map(c -> c.contains(",") || c.contains("\"") ? '"' + c.replace("\"", "\"\"") + '"' : c).toList())).append('\n');
        }
        Path without = dir.resolve("without.csv");
        Files.writeString(without, plain.toString());
        TraceContext context = TraceContext.forPool(GpuCatalog.standard(), POOL);
        for (String policy : List.of("fcfs", "fair-share", "las")) {
            SimulationResult a = new Simulator(POOL, SchedulerConfig.defaults(policy)).run(TraceFile.open(with, new GpupoolCsvFormat(), context, false));
            SimulationResult b = new Simulator(POOL, SchedulerConfig.defaults(policy)).run(TraceFile.open(without, new GpupoolCsvFormat(), context, false));
            assertThat(ResultFormat.table(List.of(a))).isEqualTo(ResultFormat.table(List.of(b)));
            assertThat(ResultFormat.json(List.of(a), Map.of()).replace("with.csv", "t")).isEqualTo(ResultFormat.json(List.of(b), Map.of()).replace("without.csv", "t"));
        }
    }

    /** RFC 4180 cells of one line (no line breaks inside). */
    private static String[] split(String line) {
        List<String> out = new java.util.ArrayList<>();
        StringBuilder cur = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (quoted && c == '"' && i + 1 < line.length() && line.charAt(i + 1) == '"') { cur.append('"'); i++; }
            else if (c == '"') quoted = !quoted;
            else if (c == ',' && !quoted) { out.add(cur.toString()); cur.setLength(0); }
            else cur.append(c);
        }
        out.add(cur.toString());
        return out.toArray(String[]::new);
    }

    @Test
    void theRecordedRowMeasuresWhatHappenedWithTheSimulatorsMetrics() {
        SimulationResult r = RecordedReplay.replay(POOL, SchedulerConfig.defaults("fair-share"), jobs(), "recorded (fair-share)", "h", 3_600_000);
        assertThat(r.policy()).isEqualTo("recorded (fair-share)");
        assertThat(r.jobs()).isEqualTo(4);
        assertThat(r.preemptions()).isEqualTo(1);   // j4 ran twice
        assertThat(r.timeouts()).isEqualTo(1);
        // waits 0.04, 58.54, 0.001, 1.001 s; JCTs 60.04, 69.04, 3, 7.5 s
        assertThat(r.waiting().mean()).isCloseTo((0.04 + 58.54 + 0.001 + 1.001) / 4, within(1e-9));
        assertThat(r.waiting().max()).isCloseTo(58.54, within(1e-9));
        assertThat(r.jct().mean()).isCloseTo((60.04 + 69.04 + 3 + 7.5) / 4, within(1e-9));
        assertThat(r.makespanSec()).isCloseTo(70.54, within(1e-9));
        // GPU-time held: 8 x 60 + 0.25 x 10.5 + 2.999 + 0.999 + 5.5 over 12 GPUs x 70.54 s
        assertThat(r.utilization()).isCloseTo((8 * 60 + 0.25 * 10.5 + 2.999 + 0.999 + 5.5) / (12 * 70.54), within(1e-9));
    }

    @Test
    void aRunOnANodeThePoolLacksIsRefusedNamingTheJobAndNode() {
        JobSpec s = JobSpec.builder("x").submitMs(0).gpus(1).build();
        List<RecordedJob> jobs = List.of(RecordedJob.of(s, null, 0, "SUCCEEDED", List.of(run(0, 10, "gone-node", 0))));
        assertThatThrownBy(() -> RecordedReplay.replay(POOL, SchedulerConfig.defaults("fcfs"), jobs, "recorded", "h", 3_600_000))
                .isInstanceOf(SpecException.class).hasMessageContaining("job x").hasMessageContaining("gone-node");
    }
}
