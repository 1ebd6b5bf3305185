package io.gpupool.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gpupool.sim.trace.SyntheticTrace;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class SimulateCommandTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    @TempDir Path dir;

    private Path file(String name, String... lines) throws IOException {
        Path p = dir.resolve(name);
        Files.writeString(p, String.join("\n", lines) + "\n");
        return p;
    }

    private Path smallTrace() throws IOException {
        return file("t.csv", "job_id,submit_time,duration,num_gpus,tenant",
                "a,0,100,2,x", "b,0,100,4,y", "c,50,10,1,x");
    }

    /** The help lists every registered policy (themis is one registration line), and each runs. */
    @Test
    void theHelpListsTheRegisteredPoliciesAndThemisRuns() throws IOException {
        Cli.Result help = Cli.run("simulate", "--help");
        assertThat(help.exitCode()).isZero();
        assertThat(help.out().replaceAll("\\s+", " ")).contains("fcfs, fcfs-backfill, priority, fair-share, qssf, las, srtf-oracle, themis, gittins (default");
        Cli.Result r = Cli.run("simulate", "--trace", smallTrace().toString(), "--cluster", "1x4:A100-80GB", "--policy", "themis", "--output", "json");
        assertThat(r.exitCode()).isZero();
        JsonNode arr = new ObjectMapper().readTree(r.out());
        assertThat(arr.get(0).get("policy").asText()).isEqualTo("themis");
        assertThat(arr.get(0).get("unfinished").asInt()).isZero();
    }

    private static final String ALL_POLICIES = "fcfs,fcfs-backfill,priority,fair-share,qssf,las,srtf-oracle,themis,gittins";

    /** Policies replayed on several threads print exactly what they print one after the other. */
    @Test
    void parallelReplaysPrintTheSameAsSequentialOnes() {
        String[] args = {"simulate", "--synthetic", "600,load=0.9", "--seed", "3", "--cluster", "2x8:A100-80GB",
                "--policy", ALL_POLICIES, "--output", "json"};
        Cli.Result sequential = Cli.run(concat(args, "--threads", "1"));
        Cli.Result parallel = Cli.run(concat(args, "--threads", "4"));
        Cli.Result byDefault = Cli.run(args);
        assertThat(sequential.exitCode()).as(sequential.err()).isZero();
        assertThat(parallel.exitCode()).as(parallel.err()).isZero();
        assertThat(parallel.out()).isEqualTo(sequential.out());
        assertThat(byDefault.out()).isEqualTo(sequential.out());
        assertThat(policiesOf(parallel.out())).containsExactly(ALL_POLICIES.split(","));
    }

    /** A file trace compared under several policies is parsed once and shared: each result is what the policy gives alone. */
    @Test
    void aFileTraceReadOnceGivesEachPolicyItsOwnResult() throws IOException {
        Path t = dir.resolve("synthetic.csv");
        StringBuilder csv = new StringBuilder();
        SyntheticTrace.writeCsv(new SyntheticTrace(new SyntheticTrace.Params(5, 1200, 0.9, 32, 4, 0.2)), csv);
        Files.writeString(t, csv);
        String policies = "fcfs,priority,las,qssf";
        Cli.Result all = Cli.run("simulate", "--trace", t.toString(), "--cluster", "4x8:A100-80GB", "--policy", policies,
                "--threads", "3", "--output", "json");
        assertThat(all.exitCode()).as(all.err()).isZero();
        JsonNode together = JSON.readTree(all.out());
        String[] names = policies.split(",");
        for (int i = 0; i < names.length; i++) {
            Cli.Result alone = Cli.run("simulate", "--trace", t.toString(), "--cluster", "4x8:A100-80GB", "--policy", names[i], "--output", "json");
            assertThat(together.get(i)).as(names[i]).isEqualTo(JSON.readTree(alone.out()).get(0));
        }
    }

    @Test
    void threadsMustBeAtLeastOne() throws IOException {
        for (String bad : List.of("0", "-2")) {
            Cli.Result r = Cli.run("simulate", "--trace", smallTrace().toString(), "--cluster", "1x4:A100-80GB", "--policy", "fcfs,las",
                    "--threads", bad);
            Cli.assertRefused(r, "threads");
            assertThat(r.out()).isEmpty();
        }
        Cli.Result notANumber = Cli.run("simulate", "--trace", smallTrace().toString(), "--cluster", "1x4:A100-80GB", "--threads", "many");
        assertThat(notANumber.exitCode()).isEqualTo(2);
        assertThat(notANumber.err()).contains("--threads");
    }

    /** Refused once, before the replays start, not once per policy's thread. */
    @Test
    void anUnknownBatchSolverIsRefusedBeforeAnyReplay() throws IOException {
        Cli.Result r = Cli.run("simulate", "--trace", smallTrace().toString(), "--cluster", "1x4:A100-80GB", "--policy", "fcfs,las",
                "--batch", "no-such-solver");
        Cli.assertRefused(r, "solver");
        assertThat(r.err()).doesNotContain("policy");
        assertThat(r.out()).isEmpty();
    }

    private static String[] concat(String[] args, String... more) {
        String[] all = java.util.Arrays.copyOf(args, args.length + more.length);
        System.arraycopy(more, 0, all, args.length, more.length);
        return all;
    }

    private static List<String> policiesOf(String json) {
        try {
            List<String> names = new java.util.ArrayList<>();
            JSON.readTree(json).forEach(n -> names.add(n.get("policy").asText()));
            return names;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void comparesPoliciesSideBySideInATable() throws IOException {
        Cli.Result r = Cli.run("simulate", "--trace", smallTrace().toString(), "--cluster", "1x4:A100-80GB", "--policy", "fcfs,fcfs-backfill,las");
        assertThat(r.exitCode()).isZero();
        assertThat(r.out()).contains("utilization", "waiting", "completion time", "fairness", "avg JCT", "frag", "Jain");
        assertThat(r.out().lines().filter(l -> l.startsWith("fcfs ") || l.startsWith("fcfs-backfill") || l.startsWith("las"))).hasSize(3);
        // stderr is not a terminal here: no progress bar; nothing to note
        assertThat(r.err()).isEmpty();
    }

    @Test
    void jsonCarriesTheContractFields() throws IOException {
        Cli.Result r = Cli.run("simulate", "--trace", smallTrace().toString(), "--cluster", "1x4:A100-80GB", "--policy", "fcfs,qssf", "--output", "json");
        assertThat(r.exitCode()).isZero();
        JsonNode arr = JSON.readTree(r.out());
        assertThat(arr.size()).isEqualTo(2);
        for (String f : List.of("policy", "jobs", "avg_jct_s", "p50_jct_s", "p95_jct_s", "p99_jct_s", "avg_wait_s", "max_wait_s",
                "makespan_s", "utilization", "jain_fairness")) {
            assertThat(arr.get(0).has(f)).as(f).isTrue();
        }
        // strict FCFS on one 4-GPU node: a 0-100, b 100-200, c 200-210 (JCTs 100, 200, 160)
        assertThat(arr.get(0).get("policy").asText()).isEqualTo("fcfs");
        assertThat(arr.get(0).get("jobs").asInt()).isEqualTo(3);
        assertThat(arr.get(0).get("avg_jct_s").asDouble()).isEqualTo(153.333);
        assertThat(arr.get(0).get("makespan_s").asDouble()).isEqualTo(210.0);
        assertThat(arr.get(0).get("tenants").size()).isEqualTo(2);
    }

    /**
     * Energy is in every replay's output; node power-down adds its fields. One V100-32GB node of 4 GPUs (catalog: 40 W
     * idle, 300 W TDP; u = 0.8: 248 W busy): a on 2 GPUs 0..100, then nothing until b (4 GPUs) arrives at 2000.
     * Without power-down the node idles 100..2000: (2 x 248 + 2 x 40) x 100 + 4 x 40 x 1900 + 4 x 248 x 100 = 460,800 J.
     * With idle=10m,wake=1m it powers off at 700, wakes at 2000 and takes b at 2060: (2 x 248 + 2 x 40) x 100
     * + 4 x 40 x 600 + 4 x 40 x 60 (waking) + 4 x 248 x 100 = 262,400 J; b waits the 60 s of the wake-up.
     */
    @Test
    void energyIsInEveryOutputAndPowerDownAddsItsFields() throws IOException {
        Path t = file("e.csv", "job_id,submit_time,duration,num_gpus,tenant", "a,0,100,2,x", "b,2000,100,4,y");
        Cli.Result plain = Cli.run("simulate", "--trace", t.toString(), "--cluster", "1x4:V100-32GB", "--output", "json");
        assertThat(plain.exitCode()).as(plain.err()).isZero();
        JsonNode p = JSON.readTree(plain.out()).get(0);
        assertThat(p.get("energy_kwh").asDouble()).isEqualTo(0.128);
        assertThat(p.has("asleep_node_hours")).isFalse();
        assertThat(p.get("tenants").get(0).has("energy_kwh")).isTrue();

        Cli.Result down = Cli.run("simulate", "--trace", t.toString(), "--cluster", "1x4:V100-32GB", "--output", "json",
                "--power-down", "idle=10m,wake=1m");
        assertThat(down.exitCode()).as(down.err()).isZero();
        JsonNode d = JSON.readTree(down.out()).get(0);
        assertThat(d.get("energy_kwh").asDouble()).isEqualTo(0.073);
        assertThat(d.get("power_down").asText()).isEqualTo("idle=10m,wake=1m");
        assertThat(d.get("wakeups").asInt()).isEqualTo(1);
        assertThat(d.get("wake_wait_s").asDouble()).isEqualTo(60.0);
        assertThat(d.get("avg_jct_s").asDouble()).isEqualTo(130.0);   // a 100, b 160
        assertThat(d.get("asleep_node_hours").asDouble()).isEqualTo(0.361);

        Cli.Result table = Cli.run("simulate", "--trace", t.toString(), "--cluster", "1x4:V100-32GB", "--power-down", "idle=10m,wake=1m",
                "--energy-util", "1", "--report", dir.resolve("report").toString());
        assertThat(table.exitCode()).as(table.err()).isZero();
        assertThat(table.out()).contains("kWh", "asleep node-h", "wake wait/job");
        assertThat(Files.readString(dir.resolve("report/index.html"))).contains("u=1.0", "V100-32GB idle 40 W, TDP 300 W, busy 300 W",
                "idle=10m,wake=1m");
    }

    @Test
    void badEnergySettingsAreRefusedBeforeAnyReplay() throws IOException {
        Path t = smallTrace();
        Cli.assertRefused(Cli.run("simulate", "--trace", t.toString(), "--cluster", "1x4:A100-80GB", "--power-down", "idle=30m"), "wake");
        Cli.assertRefused(Cli.run("simulate", "--trace", t.toString(), "--cluster", "1x4:A100-80GB", "--power-down", "idle=30m,wake=5m,keep=x"), "keep");
        Cli.assertRefused(Cli.run("simulate", "--trace", t.toString(), "--cluster", "1x4:A100-80GB", "--energy-util", "1.5"), "utilization");
    }

    @Test
    void qssfWithTheHistoryPredictorLearnsDuringTheReplay() throws IOException {
        // one GPU; a and b run once (0-1000, 1000-1010) and teach the predictor; x holds the GPU 1500-1600 while
        // a2 (like a) and b2 (like b) arrive. history: b2 1600-1610, a2 1610-2610; none: a2 first, b2 2600-2610.
        Path t = file("learn.csv", "job_id,submit_time,duration,num_gpus,user,name",
                "a,0,1000,1,alice,train-long", "b,0,10,1,alice,train-short", "x,1500,100,1,carol,blocker",
                "a2,1550,1000,1,alice,train-long", "b2,1550,10,1,alice,train-short");
        double history = avgJct(Cli.run("simulate", "--trace", t.toString(), "--cluster", "1x1:A100-80GB", "--policy", "qssf",
                "--predictor", "history", "--output", "json"));
        double none = avgJct(Cli.run("simulate", "--trace", t.toString(), "--cluster", "1x1:A100-80GB", "--policy", "qssf",
                "--predictor", "none", "--output", "json"));
        assertThat(history).isEqualTo((1000 + 1010 + 100 + 60 + 1060) / 5.0);
        assertThat(none).isEqualTo((1000 + 1010 + 100 + 1050 + 1060) / 5.0);
    }

    @Test
    void anUnknownPredictorIsRefusedBeforeAnyWork() throws IOException {
        Cli.Result r = Cli.run("simulate", "--trace", smallTrace().toString(), "--cluster", "1x4:A100-80GB", "--policy", "qssf", "--predictor", "psychic");
        Cli.assertRefused(r, "name");
        assertThat(r.err()).as("the names it knows").contains("history", "gbt", "none");
    }

    @Test
    void aJobThatNamesItsModelGetsItsGpuMemoryFromTheAdvisor() throws IOException {
        // on 16 GB T4s: 7B int4 inference on half a GPU needs 5422 MiB and runs; 7B bf16 training over 8 whole GPUs needs
        // 16379 MiB per GPU, which no T4 has, so the engine refuses it
        Path t = file("models.csv", "job_id,submit_time,duration,num_gpus,gpu_milli,gpu_mem_mib,model_params,model_mode,model_precision",
                "serve,0,60,1,500,,7B,infer,int4", "train,0,60,8,,,7B,train,bf16");
        Cli.Result r = Cli.run("simulate", "--trace", t.toString(), "--cluster", "1x8:T4", "--policy", "fcfs", "--output", "json");
        assertThat(r.exitCode()).as(r.err()).isZero();
        JsonNode result = JSON.readTree(r.out()).get(0);
        assertThat(result.get("jobs").asInt()).isEqualTo(1);
        assertThat(result.get("rejected").asInt()).isEqualTo(1);
        assertThat(result.get("utilization").asDouble()).as("half of one of 8 GPUs for the whole run").isEqualTo(0.0625);
    }

    @Test
    void aBadModelCellNamesLineAndColumn() throws IOException {
        Path t = file("bad-model.csv", "job_id,submit_time,duration,num_gpus,model_params", "a,0,60,1,7B", "b,0,60,1,lots");
        Cli.Result r = Cli.run("simulate", "--trace", t.toString(), "--cluster", "1x8:T4");
        Cli.assertRefused(r, "model_params");
        assertThat(r.err()).contains("bad-model.csv:3");
    }

    private static double avgJct(Cli.Result r) throws IOException {
        assertThat(r.exitCode()).as(r.err()).isZero();
        return JSON.readTree(r.out()).get(0).get("avg_jct_s").asDouble();
    }

    @Test
    void csvIsOneRowPerPolicy() throws IOException {
        Cli.Result r = Cli.run("simulate", "--trace", smallTrace().toString(), "--cluster", "1x4:A100-80GB", "--policy", "fcfs,priority", "--output", "csv");
        assertThat(r.out().lines().toList()).hasSize(3);
        assertThat(r.out()).startsWith("policy,placement,jobs,rejected,unfinished,avg_jct_s");
    }

    @Test
    void reportWritesAnOfflineHtmlPageAndCharts() throws IOException {
        Path out = dir.resolve("report");
        Cli.Result r = Cli.run("simulate", "--trace", smallTrace().toString(), "--cluster", "1x4:A100-80GB", "--policy", "fcfs,las", "--report", out.toString());
        assertThat(r.exitCode()).isZero();
        assertThat(r.err()).contains("gpupool: report: " + out.resolve("index.html"));
        assertThat(Files.readString(out.resolve("index.html"))).contains("<svg", "The four goals").doesNotContain("<script");
        assertThat(out.resolve("jct-cdf.svg")).exists();
        assertThat(out.resolve("tenants-las.svg")).exists();
    }

    @Test
    void aMalformedRowStopsTheRunNamingFileLineColumnAndRule() throws IOException {
        Path bad = file("bad.csv", "job_id,submit_time,duration,num_gpus", "a,0,100,1", "b,0,zero,1");
        Cli.Result r = Cli.run("simulate", "--trace", bad.toString(), "--cluster", "1x4:A100-80GB");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).isEqualTo("gpupool: " + bad + ":3: field 'duration': must be a number, got 'zero'" + System.lineSeparator());
        assertThat(r.out()).isEmpty();
    }

    @Test
    void skipBadRowsGoesOnAndSaysHowMany() throws IOException {
        Path bad = file("bad.csv", "job_id,submit_time,duration,num_gpus", "a,0,100,1", "b,0,zero,1", "c,1,-1,1", "d,2,10,1");
        Cli.Result r = Cli.run("simulate", "--trace", bad.toString(), "--cluster", "1x4:A100-80GB", "--skip-bad-rows", "--output", "json", "--quiet");
        assertThat(r.exitCode()).isZero();
        assertThat(r.err()).startsWith("gpupool: skipped 2 malformed rows (--skip-bad-rows); first: " + bad + ":3: field 'duration'");
        JsonNode arr = JSON.readTree(r.out());
        assertThat(arr.get(0).get("jobs").asInt()).isEqualTo(2);
        assertThat(arr.get(0).get("skipped_rows").asInt()).isEqualTo(2);
    }

    @Test
    void phillyFormat() throws IOException {
        Path p = file("philly.csv", "timestamp,duration,num_gpus,gpu_time,cluster",
                "2017-10-09 07:00:00,100,1,100,vc1", "2017-10-09 06:59:00,60,2,120,vc2");
        Cli.Result r = Cli.run("simulate", "--trace", p.toString(), "--trace-format", "philly", "--cluster", "1x8:V100-32GB", "--output", "json");
        assertThat(r.exitCode()).isZero();
        JsonNode s = JSON.readTree(r.out()).get(0);
        assertThat(s.get("jobs").asInt()).isEqualTo(2);
        // submitted at 0 (06:59) and 60 s later; both start at once: the last one ends at 160 s
        assertThat(s.get("makespan_s").asDouble()).isEqualTo(160.0);
    }

    private Path[] openb() throws IOException {
        Path pods = file("pods.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time",
                "p0,1,1,1,600,,LS,Running,0,100,0", "p1,1,1,1,600,,LS,Running,0,100,0", "p2,1,1,1,300,V100M32,LS,Running,10,50,10",
                "p3,1,1,0,0,,LS,Running,0,100,0");
        // 32 GPUs: one task (at most one GPU) moves arrived demand by 3% at most
        Path nodes = file("nodes.csv", "sn,cpu_milli,memory_mib,gpu,model", "n0,1,1,8,V100M32", "n1,1,1,8,T4", "n2,1,1,8,T4", "n3,1,1,8,G2");
        return new Path[] {pods, nodes};
    }

    @Test
    void openbReplayOnItsOwnNodeList() throws IOException {
        Path[] f = openb();
        Cli.Result r = Cli.run("simulate", "--trace", f[0].toString(), "--trace-format", "openb", "--nodes", f[1].toString(), "--output", "json");
        assertThat(r.exitCode()).isZero();
        assertThat(r.err()).contains("gpupool: left out 1 row: CPU-only pod (num_gpu 0)");
        assertThat(JSON.readTree(r.out()).get(0).get("jobs").asInt()).isEqualTo(3);
    }

    @Test
    void inflationModePrintsTheContractJson() throws IOException {
        Path[] f = openb();
        Path report = dir.resolve("inflation-report");
        Cli.Result r = Cli.run("simulate", "--mode", "inflation", "--trace-format", "openb", "--trace", f[0].toString(), "--nodes", f[1].toString(),
                "--placement", "fgd,best-fit,binpack", "--seed", "3", "--output", "json", "--quiet", "--report", report.toString());
        assertThat(r.exitCode()).isZero();
        assertThat(Files.readString(report.resolve("index.html"))).contains("<svg", "GPUs left unallocated").doesNotContain("<script");
        assertThat(report.resolve("inflation-unallocated-from-80.svg")).exists();
        assertThat(Files.readString(report.resolve("inflation.json"))).contains("\"placement\"");
        JsonNode arr = JSON.readTree(r.out());
        assertThat(arr.size()).isEqualTo(3);
        assertThat(arr.get(0).get("placement").asText()).isEqualTo("fgd");
        JsonNode curve = arr.get(0).get("curve");
        assertThat(curve.get(0).fieldNames()).toIterable().containsExactly("arrived_pct", "allocated_pct", "unallocated_gpus");
        assertThat(curve.get(curve.size() - 1).get("arrived_pct").asDouble()).isGreaterThanOrEqualTo(100);
        double prev = 0;
        for (JsonNode p : curve) {
            assertThat(p.get("arrived_pct").asDouble() - prev).isLessThanOrEqualTo(5);
            prev = p.get("arrived_pct").asDouble();
        }
        assertThat(arr.get(0).fieldNames()).toIterable().containsExactly("placement", "curve");
    }

    @Test
    void inflationHonoursHostCpuUnlessIgnored() throws IOException {
        // every node of the list offers 1 milli-core and every task asks for it: one task per node, 4 in all
        Path[] f = openb();
        double[] unallocated = new double[2];
        for (int i = 0; i < 2; i++) {
            List<String> args = new java.util.ArrayList<>(List.of("simulate", "--mode", "inflation", "--trace-format", "openb", "--trace", f[0].toString(),
                    "--nodes", f[1].toString(), "--placement", "best-fit", "--inflation-max", "100", "--output", "json", "--quiet"));
            if (i == 1) args.add("--ignore-host");
            Cli.Result r = Cli.run(args.toArray(String[]::new));
            assertThat(r.exitCode()).isZero();
            JsonNode curve = JSON.readTree(r.out()).get(0).get("curve");
            unallocated[i] = curve.get(curve.size() - 1).get("unallocated_gpus").asDouble();
        }
        assertThat(unallocated[0]).as("4 tasks of at most 1 GPU on 32 GPUs").isGreaterThanOrEqualTo(28);
        assertThat(unallocated[1]).as("GPUs alone decide with --ignore-host").isLessThan(20);
    }

    @Test
    void inflationWithALookAheadWindowAndTheOfflineAnswer() throws IOException {
        Path[] f = openb();
        Cli.Result r = Cli.run("simulate", "--mode", "inflation", "--trace-format", "openb", "--trace", f[0].toString(), "--nodes", f[1].toString(),
                "--placement", "fgd", "--batch", "greedy:window=8", "--hold", "8", "--offline", "greedy:window=1000", "--offline-at", "50,100",
                "--inflation-max", "100", "--ignore-host", "--quiet");
        assertThat(r.exitCode()).isZero();
        List<String> lines = r.out().lines().toList();
        // the offline table: one row per level, the look-ahead curve's unallocated GPUs, the offline answer's and their ratio
        String head = lines.stream().filter(l -> l.contains("offline greedy:window=1000 unalloc")).findFirst().orElseThrow();
        assertThat(head).contains("fgd/greedy:window=8 unalloc", "bound", "fgd/greedy:window=8 / offline");
        int at = lines.indexOf(head);
        assertThat(lines.get(at + 2).trim()).startsWith("50.");
        // a level is reached by the first draw that brings arrived demand to it: on 32 GPUs, a little past 100%
        String level = lines.get(at + 3).trim().split("%")[0];
        assertThat(Double.parseDouble(level)).isBetween(100.0, 105.0);
        assertThat(lines).anySatisfy(l -> assertThat(l).startsWith("decisions fgd/greedy:window=8: ").contains("rounds for", "ms per task"));
    }

    @Test
    void inflationWithPeriodicRepackingReportsItsRepacksAndMigrations() throws IOException {
        Path[] f = openb();
        Cli.Result r = Cli.run("simulate", "--mode", "inflation", "--trace-format", "openb", "--trace", f[0].toString(), "--nodes", f[1].toString(),
                "--placement", "fgd", "--repack", "cpsat:every=4,seconds=1", "--inflation-max", "110", "--ignore-host", "--output", "json", "--quiet");
        assertThat(r.exitCode()).as(r.err()).isZero();
        JsonNode arr = JSON.readTree(r.out());
        assertThat(arr.get(0).get("placement").asText()).isEqualTo("fgd/repack cpsat:every=4,seconds=1");
        // past 100% tasks wait, so re-packs run
        String line = r.err().lines().filter(l -> l.startsWith("decisions fgd/repack cpsat:every=4,seconds=1: ")).findFirst().orElseThrow();
        assertThat(line).contains("re-packs", "s per re-pack on average", "migrations", "of the shares running at a re-pack", "waiting tasks started");
        assertThat(line).doesNotContain(": 0 re-packs");
        assertThat(line).contains(", 0 preemptions (0 at most in one)");
    }

    @Test
    void inflationWithRepackingThatMayPreemptReportsItsPreemptions() throws IOException {
        Path[] f = openb();
        Cli.Result r = Cli.run("simulate", "--mode", "inflation", "--trace-format", "openb", "--trace", f[0].toString(), "--nodes", f[1].toString(),
                "--placement", "fgd", "--repack", "cpsat:every=4,seconds=1,preempt=true", "--inflation-max", "110", "--ignore-host", "--output", "json", "--quiet");
        assertThat(r.exitCode()).as(r.err()).isZero();
        JsonNode arr = JSON.readTree(r.out());
        assertThat(arr.get(0).get("placement").asText()).isEqualTo("fgd/repack cpsat:every=4,seconds=1,preempt=true");
        String line = r.err().lines().filter(l -> l.startsWith("decisions fgd/repack cpsat:every=4,seconds=1,preempt=true: ")).findFirst().orElseThrow();
        assertThat(line).containsPattern("[0-9,]+ preemptions \\([0-9,]+ at most in one\\)");
        assertThat(line).doesNotContain(": 0 re-packs");
    }

    @Test
    void badRepackOptionsAreRefusedNamingTheRule() throws IOException {
        Path[] f = openb();
        List<String> base = List.of("simulate", "--mode", "inflation", "--trace-format", "openb", "--trace", f[0].toString(), "--nodes", f[1].toString());
        for (String[] c : new String[][] {{"cpsat:seconds=2", "every"}, {"cpsat:every=0", "every"}, {"cpsat:every=lots", "every"},
                {"cpsat:every=10,window=64", "window"}, {"simplex:every=10", "solver"}, {"cpsat:every=10,depth=3", "depth"},
                {"cpsat:every=10,gpus=0", "gpus"}, {"cpsat:every=10,gpus=all", "gpus"},
                {"cpsat:every=10,preempt=yes", "preempt"}, {"cpsat:every=10,preempt=", "preempt"}}) {
            List<String> args = new java.util.ArrayList<>(base);
            args.addAll(List.of("--repack", c[0]));
            Cli.Result r = Cli.run(args.toArray(String[]::new));
            Cli.assertRefused(r, c[1]);
            assertThat(r.err()).as(c[0]).contains("--repack");
        }
        List<String> both = new java.util.ArrayList<>(base);
        both.addAll(List.of("--repack", "cpsat:every=10", "--batch", "greedy"));
        Cli.assertRefused(Cli.run(both.toArray(String[]::new)), "repack");
    }

    @Test
    void afterJsonTheDecisionsAndTheOfflineTableGoToStderr() throws IOException {
        Path[] f = openb();
        Cli.Result r = Cli.run("simulate", "--mode", "inflation", "--trace-format", "openb", "--trace", f[0].toString(), "--nodes", f[1].toString(),
                "--placement", "fgd", "--batch", "greedy:window=8", "--hold-from", "50", "--offline", "greedy:window=1000", "--offline-at", "100",
                "--inflation-max", "100", "--ignore-host", "--output", "json", "--quiet");
        assertThat(r.exitCode()).isZero();
        JsonNode arr = JSON.readTree(r.out());
        assertThat(arr.get(0).get("placement").asText()).isEqualTo("fgd/greedy:window=8@50%");
        assertThat(r.err()).contains("decisions fgd/greedy:window=8@50%: ", "offline greedy:window=1000 unalloc");
    }

    @Test
    void holdWithoutBatchAndBadOfflineLevelsAreRefused() throws IOException {
        Path[] f = openb();
        List<String> base = List.of("simulate", "--mode", "inflation", "--trace-format", "openb", "--trace", f[0].toString(), "--nodes", f[1].toString());
        List<String> hold = new java.util.ArrayList<>(base);
        hold.addAll(List.of("--hold", "8"));
        Cli.assertRefused(Cli.run(hold.toArray(String[]::new)), "hold");
        List<String> levels = new java.util.ArrayList<>(base);
        levels.addAll(List.of("--offline", "greedy", "--offline-at", "95,lots"));
        Cli.assertRefused(Cli.run(levels.toArray(String[]::new)), "offline-at");
        List<String> solver = new java.util.ArrayList<>(base);
        solver.addAll(List.of("--offline", "simplex"));
        Cli.assertRefused(Cli.run(solver.toArray(String[]::new)), "solver");
    }

    @Test
    void inflationNeedsTheOpenbFormat() throws IOException {
        Cli.Result r = Cli.run("simulate", "--mode", "inflation", "--trace", smallTrace().toString(), "--cluster", "1x4:A100-80GB");
        Cli.assertRefused(r, "trace-format");
    }

    @Test
    void syntheticTraceInsteadOfAFile() {
        Cli.Result r = Cli.run("simulate", "--synthetic", "300,load=1.5,tenants=3", "--seed", "5", "--cluster", "2x8:A100-80GB", "--policy", "fcfs,fair-share", "--output", "csv");
        assertThat(r.exitCode()).isZero();
        assertThat(r.out().lines().toList()).hasSize(3);
        Cli.Result again = Cli.run("simulate", "--synthetic", "300,load=1.5,tenants=3", "--seed", "5", "--cluster", "2x8:A100-80GB", "--policy", "fcfs,fair-share", "--output", "csv");
        assertThat(again.out()).isEqualTo(r.out());
    }

    @Test
    void badOptionsAreUserErrors() throws IOException {
        String t = smallTrace().toString();
        Cli.assertRefused(Cli.run("simulate", "--cluster", "1x4:A100-80GB"), "trace");
        Cli.assertRefused(Cli.run("simulate", "--trace", t, "--synthetic", "10", "--cluster", "1x4:A100-80GB"), "trace");
        Cli.assertRefused(Cli.run("simulate", "--trace", t), "cluster");
        Cli.Result format = Cli.run("simulate", "--trace", t, "--cluster", "1x4:A100-80GB", "--trace-format", "swf");
        Cli.assertRefused(format, "trace-format");
        assertThat(format.err()).as("the formats it knows").contains("gpupool, philly, openb");
        Cli.assertRefused(Cli.run("simulate", "--trace", t, "--cluster", "1x4:A100-80GB", "--fairness-window", "soon"), "duration");
        Cli.assertRefused(Cli.run("simulate", "--synthetic", "lots", "--cluster", "1x4:A100-80GB"), "jobs");
        Cli.assertRefused(Cli.run("simulate", "--synthetic", "10,speed=2", "--cluster", "1x4:A100-80GB"), "speed");
        Cli.assertRefused(Cli.run("simulate", "--trace", dir.resolve("none.csv").toString(), "--cluster", "1x4:A100-80GB"), "trace");
        Cli.assertRefused(Cli.run("simulate", "--trace", t, "--cluster", "1x4:A100-80GB", "--mode", "warp"), "mode");
    }

    @Test
    void fairnessWindowDurations() {
        assertThat(SimulateCommand.durationMs("90s")).isEqualTo(90_000);
        assertThat(SimulateCommand.durationMs("30m")).isEqualTo(1_800_000);
        assertThat(SimulateCommand.durationMs("1.5h")).isEqualTo(5_400_000);
        assertThat(SimulateCommand.durationMs("1d")).isEqualTo(86_400_000);
        assertThat(SimulateCommand.durationMs("3600")).isEqualTo(3_600_000);
    }
}
