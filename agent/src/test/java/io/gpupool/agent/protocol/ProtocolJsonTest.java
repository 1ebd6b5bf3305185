package io.gpupool.agent.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpupool.agent.gpu.FakeGpuBackend;
import io.gpupool.agent.gpu.LocalNode;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The JSON shapes of the agent protocol are the ones docs/architecture.md shows, and they read back the same. */
class ProtocolJsonTest {

    @Test
    void desiredStateUsesSnakeCaseAndRoundTrips() throws Exception {
        DesiredState d = new DesiredState(42, List.of(new JobLaunch("train-7", 1, List.of("python", "train.py"),
                Map.of("EPOCHS", "3"), "/data/runs", List.of(new GrantedGpu("GPU-a", 500, 20480)), null, "alice")));
        String json = ProtocolJson.MAPPER.writeValueAsString(d);
        assertThat(json).isEqualTo("{\"version\":42,\"jobs\":[{\"job_id\":\"train-7\",\"attempt\":1,\"command\":[\"python\",\"train.py\"],"
                + "\"env\":{\"EPOCHS\":\"3\"},\"work_dir\":\"/data/runs\",\"gpus\":[{\"uuid\":\"GPU-a\",\"milli\":500,\"memory_mib\":20480}],\"run_as\":\"alice\"}]}");
        assertThat(ProtocolJson.MAPPER.readValue(json, DesiredState.class)).isEqualTo(d);

        // host resources, where the job asked for them, become its cgroup's limits on the node
        DesiredState withHost = new DesiredState(43, List.of(new JobLaunch("train-8", 0, List.of("true"), Map.of(), null, List.of(),
                new io.gpupool.model.HostResources(1500, 4096), null)));
        String hostJson = ProtocolJson.MAPPER.writeValueAsString(withHost);
        assertThat(hostJson).contains("\"host\":{\"cpu_milli\":1500,\"memory_mib\":4096}");
        assertThat(ProtocolJson.MAPPER.readValue(hostJson, DesiredState.class)).isEqualTo(withHost);
    }

    @Test
    void registrationCarriesTheNodesConfinement() throws Exception {
        NodeInventory inv = LocalNode.inventory(new FakeGpuBackend("1xL40S", "n1").discover());
        RegisterRequest reg = new RegisterRequest("n1", "0.1.0", inv, List.of(), 5, 10_000,
                new NodeConfinement("hybrid", List.of("cpu(v1)", "devices(bpf)"), List.of("pids: none"), null), null);
        String json = ProtocolJson.MAPPER.writeValueAsString(reg);
        assertThat(json).contains("\"confinement\":{\"mode\":\"hybrid\",\"enforced\":[\"cpu(v1)\",\"devices(bpf)\"]");
        assertThat(ProtocolJson.MAPPER.readValue(json, RegisterRequest.class)).isEqualTo(reg);
        // an older agent sends none
        com.fasterxml.jackson.databind.node.ObjectNode older = (com.fasterxml.jackson.databind.node.ObjectNode) ProtocolJson.MAPPER.readTree(json);
        older.remove("confinement");
        assertThat(ProtocolJson.MAPPER.treeToValue(older, RegisterRequest.class).confinement()).isNull();
    }

    @Test
    void reportAndRegistrationRoundTrip() throws Exception {
        FakeGpuBackend fake = new FakeGpuBackend("2xL40S", "n1");
        NodeInventory inv = LocalNode.inventory(fake.discover());
        RegisterRequest reg = new RegisterRequest("n1", "0.1.0", inv, List.of(new RunningJobInfo("j", 0, 4242, 1_700_000_000_000L, false)));
        JsonNode regJson = ProtocolJson.MAPPER.readTree(ProtocolJson.MAPPER.writeValueAsString(reg));
        assertThat(regJson.get("inventory").get("gpus").get(0).get("model_id").asText()).isEqualTo("L40S");
        assertThat(regJson.get("inventory").get("gpus").get(0).has("model")).as("derived, not sent").isFalse();
        assertThat(ProtocolJson.MAPPER.readValue(regJson.toString(), RegisterRequest.class)).isEqualTo(reg);

        NodeReport r = new NodeReport("node-n1", 1_700_000_000_500L, 42,
                List.of(new GpuSample(0, "GPU-a", 50, 20480L, 46068L, 57, 201.5, List.of(new GpuProcess("GPU-a", 4242, 20480L)), null)),
                List.of(new RunningJobInfo("j", 0, 4242, 1_700_000_000_000L, false)),
                List.of(new JobStatusReport(17, "j", 0, JobPhase.RUNNING, null, 4242L, 1_700_000_000_000L, null, "started")),
                List.of(new LogChunk("j", 0, LogStream.STDOUT, 0, "hello\n".getBytes(StandardCharsets.UTF_8), false)));
        String json = ProtocolJson.MAPPER.writeValueAsString(r);
        JsonNode n = ProtocolJson.MAPPER.readTree(json);
        assertThat(n.get("applied_desired_version").asLong()).isEqualTo(42);
        assertThat(n.get("statuses").get(0).get("phase").asText()).isEqualTo("RUNNING");
        assertThat(n.get("logs").get(0).get("data").asText()).as("bytes travel as base64").isEqualTo("aGVsbG8K");
        NodeReport back = ProtocolJson.MAPPER.readValue(json, NodeReport.class);
        assertThat(back.statuses()).isEqualTo(r.statuses());
        assertThat(back.gpus()).isEqualTo(r.gpus());
        assertThat(new String(back.logs().getFirst().data(), StandardCharsets.UTF_8)).isEqualTo("hello\n");
    }

    @Test
    void theJobsSubmitInstantTravelsWithEveryAttemptAndAnOlderEndsMessageReadsAsNotKnown() throws Exception {
        JobLaunch l = new JobLaunch("j57", 1, List.of("true"), Map.of(), null, List.of()).withSubmittedMs(1_733_149_000_000L);
        String json = ProtocolJson.MAPPER.writeValueAsString(l);
        assertThat(json).contains("\"submitted_ms\":1733149000000");
        assertThat(ProtocolJson.MAPPER.readValue(json, JobLaunch.class).key()).isEqualTo(new JobKey("j57", 1, 1_733_149_000_000L));
        JobStatusReport st = new JobStatusReport(3, "j57", 1, JobPhase.SUCCEEDED, 0, null, 1L, 2L, "exit code 0", 1_733_149_000_000L);
        assertThat(ProtocolJson.MAPPER.readValue(ProtocolJson.MAPPER.writeValueAsString(st), JobStatusReport.class)).isEqualTo(st);
        LogOffset ack = new LogOffset("j57", 1, LogStream.STDOUT, 12, 1_733_149_000_000L);
        assertThat(ProtocolJson.MAPPER.readValue(ProtocolJson.MAPPER.writeValueAsString(ack), LogOffset.class)).isEqualTo(ack);
        // an end that does not know it sends nothing, and what an older end sends reads as not known
        String older = ProtocolJson.MAPPER.writeValueAsString(new JobLaunch("j57", 1, List.of("true"), Map.of(), null, List.of()));
        assertThat(older).doesNotContain("submitted");
        assertThat(ProtocolJson.MAPPER.readValue(older, JobLaunch.class).submittedMs()).isNull();
        assertThat(ProtocolJson.MAPPER.readValue("{\"seq\":1,\"job_id\":\"j\",\"attempt\":1,\"phase\":\"RUNNING\"}", JobStatusReport.class)
                .submittedMs()).isNull();
        assertThat(ProtocolJson.MAPPER.readValue("{\"job_id\":\"j\",\"attempt\":1,\"pid\":5,\"started_at_ms\":1,\"stopping\":false}",
                RunningJobInfo.class).submittedMs()).isNull();
    }

    @Test
    void aGrantReachesItsAgentAsTheLaunchesGpuForm() throws Exception {
        GrantedGpu whole = GrantedGpu.of(new Grant(1, "n1", 3, "GPU-c", 1000, 81920, true));
        assertThat(whole).isEqualTo(GrantedGpu.whole("GPU-c"));
        assertThat(ProtocolJson.MAPPER.writeValueAsString(whole)).isEqualTo("{\"uuid\":\"GPU-c\",\"milli\":1000,\"memory_mib\":0}");
        assertThat(GrantedGpu.of(new Grant(0, "n1", 2, "GPU-b", 250, 10240, false))).isEqualTo(new GrantedGpu("GPU-b", 250, 10240));
        assertThatThrownBy(() -> new Grant(0, "n1", 0, "GPU-a", 0, 0, false))
                .isInstanceOfSatisfying(io.gpupool.model.SpecException.class, e -> assertThat(e.field()).isEqualTo("milli"));
    }
}
