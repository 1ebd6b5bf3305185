package io.gpupool.server;

import io.gpupool.agent.gpu.FakeGpuBackend;
import io.gpupool.agent.link.HttpServerLink;
import io.gpupool.agent.node.NodeAgent;
import io.gpupool.agent.protocol.AgentProtocolVersion;
import io.gpupool.agent.tls.ServerTrust;
import io.gpupool.model.BuildInfo;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.gpupool.server.TestServer.ADMIN;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The agent protocol's version on a real server on loopback: the server names its version on every agent answer and in
 * {@code GET /api/v1/version}, refuses an agent announcing another one, takes an agent announcing none as version 1, and
 * a real agent of another version stops with one line naming the server and both versions. (The agent's side against a
 * server of another version: agent module, {@code HttpServerLinkProtocolTest}.)
 */
class AgentProtocolVersionTest {
    private static final String HEADER = AgentProtocolVersion.HEADER;
    private static final int NEWER = AgentProtocolVersion.CURRENT + 1;

    @TempDir Path dir;
    TestServer s;
    String join;

    @BeforeEach
    void start() {
        s = TestServer.start(TestServer.options(dir.resolve("server")).withCluster(null));
        join = s.post("/api/v1/agent-tokens", ADMIN, Map.of("label", "protocol")).text("token");
    }

    @AfterEach
    void stop() {
        s.close();
    }

    private static Map<String, Object> registration(String node) {
        return Map.of("node_name", node, "agent_version", "test", "running", List.of(),
                "inventory", Map.of("gpus", List.of(Map.of("index", 0, "uuid", "GPU-" + node, "product_name", "NVIDIA A100-SXM4-80GB",
                        "memory_total_mib", 81920, "nvlink_peers", List.of())), "cpu_count", 8, "memory_mib", 65536, "backend", "fake"));
    }

    @Test
    void the_version_endpoint_answers_without_a_token_with_this_build_and_the_agent_protocol() {
        TestServer.Reply r = s.get("/api/v1/version", null);
        assertThat(r.status()).isEqualTo(200);
        BuildInfo b = BuildInfo.current();
        assertThat(r.text("version")).isEqualTo(b.version()).doesNotContain("${");
        assertThat(r.text("commit")).isEqualTo(b.commit());
        assertThat(r.body().path("agentProtocol").asInt()).isEqualTo(AgentProtocolVersion.CURRENT);
        // a token is not needed, but a wrong one does not turn it away either
        assertThat(s.get("/api/v1/version", "not-a-token").status()).isEqualTo(200);
    }

    @Test
    void a_registration_announcing_another_version_is_refused_with_the_servers_version_and_nothing_registered() {
        TestServer.Reply r = s.call("POST", "/api/v1/agent/register", join, registration("newer"), Map.of(HEADER, Integer.toString(NEWER)));
        assertThat(r.status()).isEqualTo(422);
        assertThat(r.text("field")).isEqualTo(HEADER);
        assertThat(r.text("rule")).contains("speaks agent protocol " + AgentProtocolVersion.CURRENT, "announced " + NEWER);
        assertThat(r.raw().headers().firstValue(HEADER)).hasValue(Integer.toString(AgentProtocolVersion.CURRENT));
        assertThat(s.get("/api/v1/nodes", ADMIN).body().path("nodes")).isEmpty();

        TestServer.Reply garbled = s.call("POST", "/api/v1/agent/register", join, registration("garbled"), Map.of(HEADER, "two"));
        assertThat(garbled.status()).isEqualTo(400);
        assertThat(garbled.text("field")).isEqualTo(HEADER);
    }

    @Test
    void an_agent_that_announces_no_version_speaks_version_1() {
        TestServer.Reply r = s.post("/api/v1/agent/register", join, registration("older"));
        assertThat(r.raw().headers().firstValue(HEADER)).hasValue(Integer.toString(AgentProtocolVersion.CURRENT));
        assertThat(r.status()).isEqualTo(AgentProtocolVersion.CURRENT == AgentProtocolVersion.UNANNOUNCED ? 200 : 422);
    }

    @Test
    void a_report_announcing_another_version_is_refused_too() {
        TestServer.Reply reg = s.call("POST", "/api/v1/agent/register", join, registration("n1"),
                Map.of(HEADER, Integer.toString(AgentProtocolVersion.CURRENT)));
        assertThat(reg.status()).isEqualTo(200);
        String node = reg.text("node_id");
        Map<String, Object> report = Map.of("node_id", node, "sent_at_ms", System.currentTimeMillis(), "applied_desired_version", 0,
                "gpus", List.of(), "running", List.of(), "statuses", List.of(), "logs", List.of());
        TestServer.Reply r = s.call("POST", "/api/v1/agent/nodes/" + node + "/report", reg.text("node_token"), report,
                Map.of(HEADER, Integer.toString(NEWER)));
        assertThat(r.status()).isEqualTo(422);
        assertThat(r.text("field")).isEqualTo(HEADER);
    }

    @Test
    void a_real_agent_of_another_version_stops_with_one_line_naming_the_server_and_both_versions() throws Exception {
        HttpServerLink link = new HttpServerLink(URI.create(s.base), join, HttpServerLink.Settings.defaults(), ServerTrust.system(), NEWER);
        FakeGpuBackend gpus = new FakeGpuBackend("1xA100-80GB", "newer-agent");
        NodeAgent agent = new NodeAgent(NodeAgent.Config.defaults("newer-agent", dir.resolve("agent")).withReportInterval(Duration.ofMillis(100)),
                gpus, gpus.discover(), link);
        try {
            agent.start();
            String line = agent.incompatibleServer().get(20, TimeUnit.SECONDS);
            assertThat(line).isEqualTo("server " + s.base + " speaks agent protocol " + AgentProtocolVersion.CURRENT + ", this agent speaks "
                    + NEWER + ": upgrade the server (or run an agent of its release)");
            assertThat(s.get("/api/v1/nodes", ADMIN).body().path("nodes")).isEmpty();
        } finally {
            agent.close();
        }
    }
}
