package io.gpupool.server;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpupool.agent.protocol.JobLaunch;
import io.gpupool.agent.protocol.JobPhase;
import io.gpupool.agent.protocol.JobStatusReport;
import io.gpupool.agent.protocol.LogChunk;
import io.gpupool.agent.protocol.LogOffset;
import io.gpupool.agent.protocol.LogStream;
import io.gpupool.agent.protocol.ReportResponse;
import io.gpupool.agent.protocol.RunningJobInfo;
import io.gpupool.server.core.AgentSettings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static io.gpupool.server.TestServer.ADMIN;
import static io.gpupool.server.TestServer.eventually;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The server side of the agent protocol, message by message (an agent's exact words through its real HTTP
 * link): output by offset, the long poll, status seqs across a fresh agent work directory, a node lost and
 * back, late and stale reports, and the rules that keep a job from running twice at once (a lost node's jobs
 * move only after its lease, kill grace and margin; a requeued job waits until its last attempt is gone).
 * Short timeouts (reports every 300 ms, a node lost after 1.5 s, its jobs given up 0.3 + 0.5 s later) keep it fast.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AgentProtocolTest {
    private static final long LOST_MS = 1_500;
    private static final long MARGIN_MS = 500;
    @TempDir static Path dir;
    TestServer s;
    String join;
    String team;

    @BeforeAll
    void start() {
        s = TestServer.start(TestServer.options(dir).withCluster(null).withAgents(new AgentSettings(300, LOST_MS, MARGIN_MS)));
        join = s.post("/api/v1/agent-tokens", ADMIN, Map.of()).text("token");
        team = s.tenantWithToken("proto", 1);
    }

    @AfterAll
    void stop() {
        s.close();
    }

    private String submit(String model, Object... more) {
        Map<String, Object> m = new java.util.LinkedHashMap<>(Map.of("numGpus", 1, "gpuTypes", List.of(model), "command", List.of("true")));
        for (int i = 0; i < more.length; i += 2) m.put((String) more[i], more[i + 1]);
        TestServer.Reply r = s.post("/api/v1/jobs", team, m);
        assertThat(r.status()).as(r.body().toString()).isEqualTo(201);
        return r.text("id");
    }

    private JsonNode job(String id) {
        return s.get("/api/v1/jobs/" + id, team).body();
    }

    private static LogChunk chunk(String id, long offset, String text, boolean complete) {
        return new LogChunk(id, 1, LogStream.STDOUT, offset, text.getBytes(StandardCharsets.UTF_8), complete);
    }

    @Test
    void output_is_appended_by_offset_once_with_gaps_refused_and_the_end_marked() throws Exception {
        TestNode n = new TestNode(s.base, join, "proto-out", "1xA10");
        n.register();
        String id = submit("A10");
        n.launch(id);
        ReportResponse r = n.report(List.of(), List.of(chunk(id, 0, "hello ", false)), List.of(), 0);
        assertThat(r.logAcks()).containsExactly(new LogOffset(id, 1, LogStream.STDOUT, 6));
        r = n.report(List.of(), List.of(chunk(id, 3, "lo world\n", false)), List.of(), 0); // resent with more: only the new bytes
        assertThat(r.logAcks()).containsExactly(new LogOffset(id, 1, LogStream.STDOUT, 12));
        r = n.report(List.of(), List.of(chunk(id, 20, "beyond a gap", false)), List.of(), 0);
        assertThat(r.logAcks()).as("a chunk after a gap: the agent resends from what is held").containsExactly(new LogOffset(id, 1, LogStream.STDOUT, 12));
        n.report(List.of(), List.of(chunk(id, 12, "", true)), List.of(), 0);
        JsonNode out = s.get("/api/v1/jobs/" + id + "/logs", team).body();
        assertThat(out.path("text").asText()).isEqualTo("hello world\n");
        assertThat(out.path("complete").asBoolean()).isTrue();
        // output of an attempt the server never placed on this node is acknowledged and dropped
        LogChunk stray = new LogChunk(id, 7, LogStream.STDERR, 0, "x".getBytes(StandardCharsets.UTF_8), true);
        assertThat(n.report(List.of(), List.of(stray), List.of(), 0).logAcks()).containsExactly(new LogOffset(id, 7, LogStream.STDERR, 1));
        assertThat(s.get("/api/v1/jobs/" + id + "/logs?attempt=7&node=proto-out&stream=stderr", team).body().path("length").asLong()).isZero();
        n.report(n.status(id, 1, JobPhase.SUCCEEDED, 0));
        assertThat(job(id).path("state").asText()).isEqualTo("SUCCEEDED");
    }

    @Test
    void a_launch_names_its_jobs_submit_instant_and_reports_about_another_job_of_that_id_change_nothing() throws Exception {
        TestNode n = new TestNode(s.base, join, "proto-instant", "1xA10");
        n.register();
        String id = submit("A10");
        long submitted = job(id).path("submittedMs").asLong();
        JobLaunch l = n.launch(id);
        assertThat(l.submittedMs()).isEqualTo(submitted);
        n.report(n.status(id, 1, JobPhase.RUNNING, null).withSubmittedMs(submitted));
        assertThat(job(id).path("attempts").get(0).path("pid").asLong()).isEqualTo(4242L);

        // what an agent says of attempt 1 of an earlier job with this id (before a restore of the store): nothing changes
        long earlier = submitted - 60_000;
        JobStatusReport started = new JobStatusReport(n.nextSeq++, id, 1, JobPhase.RUNNING, null, 999L, 1L, null, "started", earlier);
        JobStatusReport failed = new JobStatusReport(n.nextSeq++, id, 1, JobPhase.FAILED, 7, null, 1L, 2L, "exit code 7", earlier);
        LogChunk output = new LogChunk(id, 1, LogStream.STDOUT, 0, "old job\n".getBytes(StandardCharsets.UTF_8), true, earlier);
        ReportResponse r = n.report(List.of(started, failed), List.of(output), List.of(), 0);
        assertThat(r.ackedStatusSeq()).as("taken, so the agent forgets them").isEqualTo(failed.seq());
        assertThat(r.logAcks()).containsExactly(new LogOffset(id, 1, LogStream.STDOUT, 8, earlier));
        JsonNode j = job(id);
        assertThat(j.path("state").asText()).isEqualTo("RUNNING");
        assertThat(j.path("attempts").get(0).path("state").asText()).isEqualTo("RUNNING");
        assertThat(j.path("attempts").get(0).path("pid").asLong()).isEqualTo(4242L);
        assertThat(s.get("/api/v1/jobs/" + id + "/logs", team).body().path("length").asLong()).isZero();

        // the job's own end and output count
        LogChunk own = new LogChunk(id, 1, LogStream.STDOUT, 0, "new job\n".getBytes(StandardCharsets.UTF_8), true, submitted);
        r = n.report(List.of(n.status(id, 1, JobPhase.SUCCEEDED, 0).withSubmittedMs(submitted)), List.of(own), List.of(), 0);
        assertThat(r.logAcks()).containsExactly(new LogOffset(id, 1, LogStream.STDOUT, 8, submitted));
        assertThat(job(id).path("state").asText()).isEqualTo("SUCCEEDED");
        assertThat(s.get("/api/v1/jobs/" + id + "/logs", team).body().path("text").asText()).isEqualTo("new job\n");
        // and a late report about the earlier job does not touch the ended attempt's row either
        n.report(new JobStatusReport(n.nextSeq++, id, 1, JobPhase.RUNNING, null, 555L, 1L, null, "started", earlier));
        assertThat(job(id).path("attempts").get(0).path("pid").asLong()).isEqualTo(4242L);
        assertThat(job(id).path("attempts").get(0).path("exitCode").asInt()).isZero();
    }

    @Test
    void a_waiting_report_returns_as_soon_as_the_node_gets_work(@TempDir Path other) throws Exception {
        // a server that holds a report with nothing to say for up to 10 s
        try (TestServer slow = TestServer.start(TestServer.options(other).withCluster(null).withAgents(new AgentSettings(10_000, 60_000)))) {
            String j = slow.post("/api/v1/agent-tokens", ADMIN, Map.of()).text("token");
            String t = slow.tenantWithToken("poll", 1);
            TestNode n = new TestNode(slow.base, j, "proto-poll", "1xT4");
            n.register();
            n.report(List.of(), List.of(), List.of(), 0); // takes the desired state after the registration
            CompletableFuture<ReportResponse> waiting = CompletableFuture.supplyAsync(() -> {
                try {
                    return n.report(List.of(), List.of(), List.of(), 10_000);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            Thread.sleep(300);
            assertThat(waiting).isNotDone();
            long t0 = System.nanoTime();
            String id = slow.post("/api/v1/jobs", t, Map.of("numGpus", 1, "command", List.of("true"))).text("id");
            ReportResponse r = waiting.get();
            assertThat((System.nanoTime() - t0) / 1_000_000).as("answered at the change, not after 10 s").isLessThan(5_000);
            assertThat(r.desired().jobs()).extracting(x -> x.jobId()).containsExactly(id);
        }
    }

    @Test
    void a_node_shows_what_its_agent_enforces_and_a_jobs_host_resources_reach_its_desired_state() throws Exception {
        TestNode n = new TestNode(s.base, join, "proto-confined", "1xH200");
        n.confinement = new io.gpupool.agent.protocol.NodeConfinement("hybrid", List.of("cpu(v1)", "memory(v1)", "devices(bpf)", "kill(cgroup.kill)"),
                List.of("pids: no cgroup hierarchy provides the pids controller"), null);
        n.register();
        // the node API reads the pool snapshot, which the engine loop rebuilds every few hundred ms
        JsonNode[] found = new JsonNode[1];
        eventually("the node in the node API", () -> {
            for (JsonNode x : s.get("/api/v1/nodes", team).body().path("nodes")) if (x.path("name").asText().equals("proto-confined")) found[0] = x;
            return found[0] != null;
        });
        JsonNode node = found[0];
        assertThat(node.path("isolation").path("mode").asText()).isEqualTo("hybrid");
        assertThat(node.path("isolation").path("enforced").toString()).contains("devices(bpf)");
        assertThat(node.path("isolation").path("missing").get(0).asText()).startsWith("pids:");

        String id = submit("H200", "cpuMilli", 1500, "hostMemMib", 512);
        JobLaunch l = n.launch(id);
        assertThat(l.host()).isEqualTo(new io.gpupool.model.HostResources(1500, 512));
        String plain = submit("H200");
        n.report(n.status(id, 1, JobPhase.SUCCEEDED, 0));
        assertThat(n.launch(plain).host()).as("no host resources asked: no limit").isNull();

        // what a node says about itself is bounded and in the agent's terms
        TestNode odd = new TestNode(s.base, join, "proto-odd", "1xH200");
        odd.confinement = new io.gpupool.agent.protocol.NodeConfinement("cgroup3", List.of(), List.of(), null);
        assertThat(org.assertj.core.api.Assertions.catchThrowable(odd::register)).hasMessageContaining("confinement.mode");
    }

    @Test
    void an_agent_with_a_fresh_work_directory_has_its_reports_taken_from_its_first_seq() throws Exception {
        TestNode n = new TestNode(s.base, join, "proto-seq", "1xL4");
        n.register();
        String first = submit("L4");
        n.launch(first);
        n.nextSeq = 40;
        n.report(n.status(first, 1, JobPhase.RUNNING, null), n.status(first, 1, JobPhase.SUCCEEDED, 0));
        assertThat(job(first).path("state").asText()).isEqualTo("SUCCEEDED");
        // the machine's agent starts over on an empty work directory: seqs from 0 again
        TestNode fresh = new TestNode(s.base, join, "proto-seq", "1xL4");
        fresh.register();
        String second = submit("L4");
        fresh.launch(second);
        ReportResponse r = fresh.report(fresh.status(second, 1, JobPhase.SUCCEEDED, 0));
        assertThat(r.ackedStatusSeq()).isZero();
        assertThat(job(second).path("state").asText()).isEqualTo("SUCCEEDED");
    }

    @Test
    void a_lost_node_gets_its_jobs_requeued_or_failed_and_its_late_reports_are_judged_by_attempt() throws Exception {
        TestNode n = new TestNode(s.base, join, "proto-lost", "2xH100-80GB");
        n.register();
        String again = submit("H100-80GB");
        String fail = submit("H100-80GB", "restartPolicy", "fail");
        n.launch(again);
        n.launch(fail);
        long lastReport = System.currentTimeMillis(); // its lease counts from when it was sent
        n.report(n.status(again, 1, JobPhase.RUNNING, null), n.status(fail, 1, JobPhase.RUNNING, null));
        // silence for longer than the node-lost timeout
        eventually("the node is lost", () -> nodeState("proto-lost").equals("lost"));
        assertThat(job(fail).path("state").asText()).as("still its, until its processes must be gone").isEqualTo("RUNNING");
        eventually("its jobs are ended", () -> job(fail).path("state").asText().equals("FAILED"));
        assertThat(job(fail).path("endedMs").asLong() - lastReport).as("after the lease, the kill grace and the margin")
                .isGreaterThanOrEqualTo(LOST_MS + n.killGraceMs + MARGIN_MS);
        assertThat(job(fail).path("message").asText()).contains("proto-lost lost", "restart policy fail");
        assertThat(job(again).path("state").asText()).isEqualTo("PENDING"); // requeued; no other node has H100s
        assertThat(job(again).path("attempts").get(0).path("state").asText()).isEqualTo("LOST");
        assertThat(s.get("/api/v1/jobs/" + again + "/events", team).body().path("events").findValuesAsText("type")).contains("REQUEUED");

        // the node is back; its first report was sent under the old lease epoch: answered, not applied
        JobStatusReport lateFailure = n.status(again, 1, JobPhase.FAILED, 137);
        ReportResponse stale = n.report(lateFailure);
        assertThat(stale.leaseEpoch()).isEqualTo(1);
        assertThat(stale.ackedStatusSeq()).as("nothing applied").isEqualTo(lateFailure.seq() - 1);
        assertThat(nodeState("proto-lost")).as("a stale report is no sign of life").isEqualTo("lost");
        // under the new epoch: the job is placed there again as attempt 2; the late failure of attempt 1 changes nothing
        ReportResponse back = n.report(lateFailure);
        assertThat(back.ackedStatusSeq()).isEqualTo(lateFailure.seq());
        assertThat(n.launch(again).attempt()).isEqualTo(2);
        eventually("the node shows ready", () -> nodeState("proto-lost").equals("ready"));
        assertThat(job(again).path("state").asText()).isEqualTo("RUNNING");
        assertThat(job(again).path("attempts").get(0).path("state").asText()).isEqualTo("FAILED"); // the agent's own account
        n.report(n.status(again, 2, JobPhase.SUCCEEDED, 0));
        assertThat(job(again).path("state").asText()).isEqualTo("SUCCEEDED");
        assertThat(job(again).path("attempt").asInt()).isEqualTo(2);
    }

    @Test
    void an_attempt_that_finished_while_its_node_was_out_of_reach_completes_its_requeued_job() throws Exception {
        TestNode n = new TestNode(s.base, join, "proto-late", "1xV100-32GB");
        n.register();
        String id = submit("V100-32GB");
        n.launch(id);
        n.report(n.status(id, 1, JobPhase.RUNNING, null));
        eventually("the node is lost", () -> nodeState("proto-late").equals("lost"));
        eventually("its job is requeued", () -> job(id).path("state").asText().equals("PENDING"));
        JobStatusReport done = n.status(id, 1, JobPhase.SUCCEEDED, 0);
        n.report(done); // back, under the old epoch: not applied
        assertThat(job(id).path("state").asText()).isEqualTo("PENDING");
        n.report(done); // under the new one, with the news that attempt 1 ended well
        JsonNode j = job(id);
        assertThat(j.path("state").asText()).isEqualTo("SUCCEEDED");
        assertThat(j.path("attempt").asInt()).as("not run again").isEqualTo(1);
        assertThat(j.path("message").asText()).contains("while the node was out of reach");
    }

    @Test
    void a_drained_job_starts_elsewhere_only_once_its_node_reports_the_last_attempt_gone() throws Exception {
        TestNode a = new TestNode(s.base, join, "proto-drain-a", "1xRTX-4090");
        TestNode b = new TestNode(s.base, join, "proto-drain-b", "1xRTX-4090");
        a.register();
        String id = submit("RTX-4090");
        JobLaunch first = a.launch(id);
        a.running = List.of(new RunningJobInfo(id, first.attempt(), 4242, System.currentTimeMillis(), false));
        a.report(a.status(id, 1, JobPhase.RUNNING, null));
        b.register();
        b.report(List.of(), List.of(), List.of(), 0);
        assertThat(s.post("/api/v1/nodes/proto-drain-a/drain", ADMIN, Map.of()).status()).isEqualTo(200);
        JsonNode held = job(id);
        assertThat(held.path("state").asText()).isEqualTo("PENDING");
        assertThat(held.path("waitReason").asText()).startsWith("held: attempt 1 is still stopping on node proto-drain-a");

        // a applied the desired state without the attempt, but its process still runs (stopping): no new attempt yet
        a.desiredUntil(d -> d.jobs().isEmpty());
        a.running = List.of(new RunningJobInfo(id, 1, 4242, System.currentTimeMillis(), true));
        a.report(List.of(), List.of(), List.of(), 0);
        for (int i = 0; i < 3; i++) b.report(List.of(), List.of(), List.of(), 0);
        assertThat(b.lastDesired.jobs()).as("not while attempt 1 may run").isEmpty();
        assertThat(job(id).path("state").asText()).isEqualTo("PENDING");

        // its end is reported: the job runs again, on b
        a.running = List.of();
        a.report(a.status(id, 1, JobPhase.STOPPED, 143));
        assertThat(b.launch(id).attempt()).isEqualTo(2);
        b.report(b.status(id, 2, JobPhase.SUCCEEDED, 0));
        assertThat(job(id).path("state").asText()).isEqualTo("SUCCEEDED");
    }

    @Test
    void an_attempt_its_agent_never_started_is_gone_once_the_agent_applied_a_desired_state_without_it() throws Exception {
        TestNode a = new TestNode(s.base, join, "proto-never-a", "1xA100-40GB");
        a.register();
        String id = submit("A100-40GB");
        a.launch(id); // placed there; this agent never starts it
        TestNode b = new TestNode(s.base, join, "proto-never-b", "1xA100-40GB");
        b.register();
        b.report(List.of(), List.of(), List.of(), 0);
        assertThat(s.post("/api/v1/nodes/proto-never-a/drain", ADMIN, Map.of()).status()).isEqualTo(200);
        assertThat(job(id).path("waitReason").asText()).startsWith("held: attempt 1 is still stopping on node proto-never-a");
        a.desiredUntil(d -> d.jobs().isEmpty()); // applied, and nothing of the job runs there
        assertThat(b.launch(id).attempt()).isEqualTo(2);
    }

    @Test
    void a_job_held_for_its_last_attempt_is_still_held_after_a_server_restart(@TempDir Path other) throws Exception {
        String j;
        String id;
        TestNode a;
        try (TestServer first = TestServer.start(TestServer.options(other).withCluster(null).withAgents(new AgentSettings(300, 60_000, 500)))) {
            j = first.post("/api/v1/agent-tokens", ADMIN, Map.of()).text("token");
            String t = first.tenantWithToken("restart", 1);
            a = new TestNode(first.base, j, "proto-restart-a", "1xL40S");
            a.register();
            id = first.post("/api/v1/jobs", t, Map.of("numGpus", 1, "command", List.of("true"))).text("id");
            a.launch(id);
            a.running = List.of(new RunningJobInfo(id, 1, 4242, System.currentTimeMillis(), false));
            a.report(a.status(id, 1, JobPhase.RUNNING, null));
            assertThat(first.post("/api/v1/nodes/proto-restart-a/drain", ADMIN, Map.of()).status()).isEqualTo(200);
        }
        try (TestServer second = TestServer.start(TestServer.options(other).withCluster(null).withAgents(new AgentSettings(300, 60_000, 500)))) {
            TestNode b = new TestNode(second.base, j, "proto-restart-b", "1xL40S");
            b.register();
            b.report(List.of(), List.of(), List.of(), 0);
            JsonNode held = second.get("/api/v1/jobs/" + id, ADMIN).body();
            assertThat(held.path("waitReason").asText()).startsWith("held: attempt 1 is still stopping on node proto-restart-a");
            assertThat(b.lastDesired.jobs()).isEmpty();
            TestNode back = new TestNode(second.base, j, "proto-restart-a", "1xL40S");
            back.nextSeq = a.nextSeq;
            back.register();
            back.report(back.status(id, 1, JobPhase.STOPPED, 143));
            assertThat(b.launch(id).attempt()).isEqualTo(2);
        }
    }

    private String nodeState(String node) {
        for (JsonNode x : s.get("/api/v1/nodes", ADMIN).body().path("nodes")) {
            if (x.path("name").asText().equals(node)) return x.path("state").asText();
        }
        return "";
    }
}
