package io.gpupool.agent.link;

import com.sun.net.httpserver.HttpServer;
import io.gpupool.agent.gpu.FakeGpuBackend;
import io.gpupool.agent.node.NodeAgent;
import io.gpupool.agent.protocol.AgentProtocolVersion;
import io.gpupool.agent.protocol.RegisterRequest;
import io.gpupool.agent.tls.ServerTrust;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The agent's side of the protocol version, against an HTTP server on loopback that answers registrations as a gpupool
 * server of a chosen version would (the server's side, against the real server: server module,
 * {@code AgentProtocolVersionTest}).
 */
class HttpServerLinkProtocolTest {
    private static final String REGISTRATION = "{\"node_id\":\"n1\",\"server_epoch\":\"e1\",\"report_interval_ms\":0,"
            + "\"node_lost_timeout_ms\":30000,\"node_token\":\"node-token\",\"lease_epoch\":0}";
    private static final int CURRENT = AgentProtocolVersion.CURRENT;

    @TempDir Path dir;
    private HttpServer http;
    private final List<String> announced = new CopyOnWriteArrayList<>();

    /** A server on loopback answering /api/v1/agent/register with {@code status}, naming {@code version} (null: no header). */
    private URI serve(int status, Integer version) throws Exception {
        http = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        http.createContext("/healthz", ex -> {
            ex.sendResponseHeaders(200, -1);
            ex.close();
        });
        http.createContext("/api/v1/agent/register", ex -> {
            announced.add(String.valueOf(ex.getRequestHeaders().getFirst(AgentProtocolVersion.HEADER)));
            ex.getRequestBody().readAllBytes();
            if (version != null) ex.getResponseHeaders().add(AgentProtocolVersion.HEADER, version.toString());
            ex.getResponseHeaders().add("Content-Type", "application/json");
            byte[] body = (status == 200 ? REGISTRATION : "{\"status\":" + status + ",\"message\":\"no\"}").getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(status, body.length);
            ex.getResponseBody().write(body);
            ex.close();
        });
        http.start();
        return URI.create("http://127.0.0.1:" + http.getAddress().getPort());
    }

    @AfterEach
    void stop() {
        if (http != null) http.stop(0);
    }

    private static RegisterRequest request() {
        FakeGpuBackend gpus = new FakeGpuBackend("1xA100-80GB", "n1");
        return new RegisterRequest("n1", "test", io.gpupool.agent.gpu.LocalNode.inventory(gpus.discover()), List.of());
    }

    private static HttpServerLink link(URI server, int version) {
        return new HttpServerLink(server, "join", HttpServerLink.Settings.defaults(), ServerTrust.system(), version);
    }

    @Test
    void a_server_answering_in_a_newer_version_is_refused_with_one_line_naming_it_and_both_versions() throws Exception {
        URI server = serve(200, CURRENT + 1);
        LinkException e = catchThrowableOfType(LinkException.class, () -> link(server, CURRENT).register(request()));
        assertThat(e.kind()).isEqualTo(LinkException.Kind.INCOMPATIBLE);
        assertThat(e.getMessage()).isEqualTo("server " + server + " speaks agent protocol " + (CURRENT + 1) + ", this agent speaks " + CURRENT
                + ": upgrade the agent to the server's release");
        assertThat(announced).containsExactly(Integer.toString(CURRENT));
    }

    @Test
    void a_refusal_naming_another_version_is_incompatible_too() throws Exception {
        URI server = serve(422, CURRENT + 1);
        LinkException e = catchThrowableOfType(LinkException.class, () -> link(server, CURRENT).register(request()));
        assertThat(e.kind()).isEqualTo(LinkException.Kind.INCOMPATIBLE);
    }

    @Test
    void a_server_that_names_no_version_speaks_version_1() throws Exception {
        URI server = serve(200, null);
        assertThat(link(server, 1).register(request()).nodeId()).isEqualTo("n1");
        LinkException e = catchThrowableOfType(LinkException.class, () -> link(server, 2).register(request()));
        assertThat(e.kind()).isEqualTo(LinkException.Kind.INCOMPATIBLE);
        assertThat(e.getMessage()).contains("speaks agent protocol 1, this agent speaks 2: upgrade the server");
    }

    @Test
    void an_error_without_the_header_is_judged_by_its_status_not_as_another_version() throws Exception {
        // e.g. a proxy's 404 in front of the server
        URI server = serve(404, null);
        LinkException e = catchThrowableOfType(LinkException.class, () -> link(server, 2).register(request()));
        assertThat(e.kind()).isEqualTo(LinkException.Kind.REJECTED);
    }

    @Test
    void the_agent_loop_stops_and_says_why() throws Exception {
        URI server = serve(200, CURRENT + 1);
        FakeGpuBackend gpus = new FakeGpuBackend("1xA100-80GB", "n1");
        NodeAgent agent = new NodeAgent(NodeAgent.Config.defaults("n1", dir).withReportInterval(Duration.ofMillis(50)), gpus, gpus.discover(),
                link(server, CURRENT));
        try {
            agent.start();
            assertThat(agent.incompatibleServer().get(15, TimeUnit.SECONDS)).contains("speaks agent protocol " + (CURRENT + 1));
        } finally {
            agent.close();
        }
        // the loop ended at the refusal: one registration, never retried
        assertThat(announced).hasSize(1);
    }
}
