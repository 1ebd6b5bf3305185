package io.gpupool.server;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpupool.agent.AgentLauncher;
import io.gpupool.agent.node.NodeAgent;
import io.gpupool.engine.config.PoolConfig;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.NodeSpec;
import io.gpupool.predict.runtime.Predictors;
import io.gpupool.server.core.AgentSettings;
import io.gpupool.server.core.ConfigChange;
import io.gpupool.server.core.NodeCodec;
import io.gpupool.sim.Simulator;
import io.gpupool.sim.history.HistoryCsv;
import io.gpupool.sim.history.RecordedJob;
import io.gpupool.sim.metrics.JobOutcome;
import io.gpupool.sim.trace.Trace;
import io.gpupool.sim.trace.TraceContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import static io.gpupool.server.TestServer.ADMIN;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * Issue 20, must show 2: a service with two real node agents on fake GPUs runs a few dozen short jobs of two tenants
 * (whole GPUs, gangs of 2 to 4, half GPUs, a failing job) under its policy. Its history, exported as a trace and
 * replayed by the simulator under the same policy and configuration on the same nodes, gives every job the wait and
 * completion time it really had, within {@link #TOLERANCE_MS}; then the service's own what-if compares other policies
 * on the same history, the record's row first.
 *
 * <p>What differs (docs/architecture.md, "History as a trace"): the replay decides at the very instant of each arrival
 * and release, the service at its next round, which comes a few milliseconds later (rounds are at least 10 ms apart, and
 * later on a loaded machine); a job's run time is its recorded hold, so the agent's start latency and the report of its
 * end are in both. The service runs strict FCFS here, whose order does not depend on when a round runs, and each job
 * asks for the GPU model of one of the two nodes, so no round chooses between nodes: those delays then only shift times
 * (they add up along a chain of jobs waiting for each other). Where a job may go to either node, a round that sees two
 * releases at once can put it on the other node than the replay, which saw them one by one, and a gang behind it then
 * waits for a different job: a CI run of this test on two A100 nodes had one 4-GPU job 526 ms later than its replay. Under
 * fair share the same delay can flip which job starts; docs/architecture.md has the figures.
 */
class HistoryReplayEndToEndTest {
    private static final int JOBS = 36;
    private static final String POLICY = "fcfs";
    /** The two nodes' GPU models: jobs 0-5 ask for the first, 6-11 for the second, and so on, so each node gets every shape. */
    private static final List<String> MODELS = List.of("A100-80GB", "H100-80GB");
    /** Largest difference allowed between a job's recorded and replayed wait, and its JCT. */
    private static final long TOLERANCE_MS = 500;
    @TempDir Path dir;

    @Test
    void the_replay_of_a_recorded_history_reproduces_each_jobs_wait_and_jct_then_other_policies_are_compared() throws Exception {
        List<NodeAgent> agents = new ArrayList<>();
        ServerOptions o = TestServer.options(dir.resolve("server")).withCluster(null).withPolicy(POLICY).withAgents(new AgentSettings(200, 10_000));
        try (TestServer s = TestServer.start(o)) {
            String join = s.post("/api/v1/agent-tokens", ADMIN, Map.of("label", "history")).text("token");
            agents.add(AgentLauncher.start(AgentLauncher.Options.fake(s.base, join, "hist-a", dir.resolve("hist-a"), "4x" + MODELS.get(0))));
            agents.add(AgentLauncher.start(AgentLauncher.Options.fake(s.base, join, "hist-b", dir.resolve("hist-b"), "4x" + MODELS.get(1))));
            TestServer.eventually("two nodes ready", () -> s.get("/api/v1/nodes", ADMIN).body().path("nodes").findValuesAsText("state")
                    .stream().filter("ready"::equals).count() == 2);
            Map<String, String> tokens = new LinkedHashMap<>();
            tokens.put("alpha", s.tenantWithToken("alpha", 2));
            tokens.put("beta", s.tenantWithToken("beta", 1));
            long from = System.currentTimeMillis();
            List<String> ids = new ArrayList<>();
            for (int i = 0; i < JOBS; i++) {
                Map<String, Object> job = new LinkedHashMap<>();
                job.put("name", "step-" + i % 4);
                job.put("gpuTypes", List.of(MODELS.get(i / 6 % 2)));
                switch (i % 6) {
                    case 0, 1 -> job.put("numGpus", 1);
                    case 2 -> job.put("numGpus", 2);
                    case 3 -> job.put("numGpus", 4);
                    case 4 -> {
                        job.put("numGpus", 1);
                        job.put("gpuMilli", 500);
                        job.put("gpuMemMib", 20_000);
                    }
                    default -> job.put("numGpus", 3);
                }
                job.put("command", List.of("sh", "-c", String.format(Locale.ROOT, "sleep %.2f", 0.3 + (i * 7 % 5) * 0.15) + (i == 9 ? "; exit 2" : "")));
                TestServer.Reply r = s.post("/api/v1/jobs", tokens.get(i % 3 == 0 ? "beta" : "alpha"), job);
                assertThat(r.status()).as(r.body().toString()).isEqualTo(201);
                ids.add(r.text("id"));
            }
            TestServer.eventually(Duration.ofSeconds(120), "all jobs end", () -> ids.stream()
                    .allMatch(id -> !List.of("PENDING", "RUNNING").contains(s.get("/api/v1/jobs/" + id, ADMIN).text("state"))));
            String window = "since=" + (from - 1000) + "&until=" + (System.currentTimeMillis() + 1000);

            // the export: the trace, and the pool and configuration it was recorded on
            JsonNode export = s.get("/api/v1/history?" + window, ADMIN).body();
            assertThat(export.path("jobs").asInt()).isEqualTo(JOBS);
            assertThat(export.path("policy").asText()).isEqualTo(POLICY);
            assertThat(export.path("leftOut").path("unfinished").asInt()).isZero();
            TestServer.Reply csv = s.get("/api/v1/history?format=csv&" + window, ADMIN);
            assertThat(csv.raw().headers().firstValue("Content-Type").orElse("")).startsWith("text/csv");
            assertThat(csv.raw().body()).isEqualTo(export.path("trace").asText());
            List<NodeSpec> nodes = new ArrayList<>();
            for (JsonNode n : export.path("nodes")) nodes.add(NodeCodec.parse(n, GpuCatalog.standard()));
            ClusterSpec pool = new ClusterSpec(nodes);
            PoolConfig config = ConfigChange.READER.readYaml(export.path("config").toString(), "server", PoolConfig.defaults("fcfs"));
            Path file = dir.resolve("history.csv");
            Files.writeString(file, csv.raw().body());
            List<RecordedJob> recorded = HistoryCsv.read(file, TraceContext.forPool(GpuCatalog.standard(), pool));
            assertThat(recorded).hasSize(JOBS);
            assertThat(recorded.stream().filter(r -> r.state().equals("FAILED")).count()).isEqualTo(1);
            // each job ran on the node of the model it asked for: no round had a choice of node
            for (RecordedJob r : recorded) {
                String node = ids.indexOf(r.spec().id()) / 6 % 2 == 0 ? "hist-a" : "hist-b";
                assertThat(r.runs()).as(r.spec().id()).allSatisfy(run -> assertThat(run.gpus()).allMatch(g -> g.node().equals(node)));
            }
            // the pool was busy: jobs really waited
            assertThat(recorded.stream().mapToLong(RecordedJob::waitMs).max().orElseThrow()).isGreaterThan(1000);

            // the replay under the same policy, configuration and nodes
            Map<String, JobOutcome> replayed = new HashMap<>();
            new Simulator(pool, config.toSchedulerConfig())
                    .predictor(() -> Predictors.forScheduling(config.predictorOr("history"), config.defaultRuntimeMs()))
                    .onJobDone(j -> replayed.put(j.id(), j))
                    .run(Trace.of("history", recorded.stream().map(RecordedJob::job).toList()));
            assertThat(replayed).hasSize(JOBS);
            long worstWait = 0, worstJct = 0;
            StringBuilder jobs = new StringBuilder("job tenant gpus submit: recorded start, replayed start (ms), recorded GPUs");
            for (RecordedJob r : recorded) {
                JobOutcome j = replayed.get(r.spec().id());
                worstWait = Math.max(worstWait, Math.abs(j.waitMs() - r.waitMs()));
                worstJct = Math.max(worstJct, Math.abs(j.jctMs() - r.jctMs()));
                jobs.append(String.format(Locale.ROOT, "%n%s %s %.1f %d: %d, %d, %s", r.spec().id(), r.spec().tenant(), r.spec().gpuMilliDemand() / 1000.0,
                        r.spec().submitTimeMs(), r.firstStartMs(), j.firstStartMs(), r.runs().getLast().gpus()));
            }
            System.out.printf(Locale.ROOT, "history replay: %d jobs, largest difference of a job's wait %d ms, of its JCT %d ms%n", JOBS, worstWait, worstJct);
            assertThat(worstWait).as("largest difference between a job's recorded and replayed wait (ms); " + jobs).isLessThanOrEqualTo(TOLERANCE_MS);
            assertThat(worstJct).as("largest difference between a job's recorded and replayed JCT (ms)").isLessThanOrEqualTo(TOLERANCE_MS);

            // the service's what-if: the record first, then each policy, on the same history
            JsonNode what = s.get("/api/v1/history/whatif?" + window + "&policy=fcfs,fair-share,qssf,las", ADMIN).body();
            JsonNode rows = what.path("results");
            assertThat(rows.findValuesAsText("policy")).containsExactly("recorded (fcfs)", "fcfs", "fair-share", "qssf", "las");
            for (JsonNode row : rows) assertThat(row.path("jobs").asInt()).as(row.path("policy").asText()).isEqualTo(JOBS);
            double recordedMean = recorded.stream().mapToLong(RecordedJob::waitMs).average().orElseThrow() / 1000.0;
            assertThat(rows.get(0).path("avg_wait_s").asDouble()).isCloseTo(recordedMean, within(0.001));
            assertThat(rows.get(1).path("avg_wait_s").asDouble()).isCloseTo(recordedMean, within(TOLERANCE_MS / 1000.0));
            assertThat(rows.get(0).path("utilization").asDouble()).isBetween(0.05, 1.0);

            // a member exports its own tenant's jobs only, and may not name another
            JsonNode beta = s.get("/api/v1/history?" + window, tokens.get("beta")).body();
            assertThat(beta.path("tenant").asText()).isEqualTo("beta");
            assertThat(beta.path("jobs").asInt()).isEqualTo(JOBS / 3);
            assertThat(beta.path("trace").asText()).doesNotContain(",alpha,");
            assertThat(s.get("/api/v1/history?tenant=alpha&" + window, tokens.get("beta")).status()).isEqualTo(403);
        } finally {
            for (NodeAgent a : agents) a.closeAndStopJobs("test over", Duration.ofSeconds(5));
        }
    }
}
