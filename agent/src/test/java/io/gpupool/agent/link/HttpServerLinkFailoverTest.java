package io.gpupool.agent.link;

import com.sun.net.httpserver.HttpServer;
import io.gpupool.agent.gpu.FakeGpuBackend;
import io.gpupool.agent.protocol.AgentProtocolVersion;
import io.gpupool.agent.protocol.RegisterRequest;
import io.gpupool.agent.tls.ServerTrust;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * An agent during a failover (high availability): the active replica is gone (its port refuses) and the standby still
 * names it as the active. The call stays on the standby, asking again every 100 ms, and goes through as soon as the
 * standby has taken over; it does not bounce between the dead replica and the standby with growing pauses. The wait is
 * bounded by the request time-out.
 */
class HttpServerLinkFailoverTest {
    private static final String REGISTRATION = "{\"node_id\":\"n1\",\"server_epoch\":\"e1\",\"report_interval_ms\":0,"
            + "\"node_lost_timeout_ms\":30000,\"node_token\":\"node-token\",\"lease_epoch\":0}";
    private HttpServer standby;
    private final AtomicInteger calls = new AtomicInteger();

    /** A standby naming {@code active} for its first {@code refusals} registrations, then the active replica itself. */
    private String standby(String active, int refusals) throws Exception {
        standby = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        standby.createContext("/api/v1/agent/register", ex -> {
            ex.getRequestBody().readAllBytes();
            boolean refuse = calls.incrementAndGet() <= refusals;
            ex.getResponseHeaders().add("Content-Type", "application/json");
            if (refuse) ex.getResponseHeaders().add(ServerList.ACTIVE_HEADER, active);
            else ex.getResponseHeaders().add(AgentProtocolVersion.HEADER, Integer.toString(AgentProtocolVersion.CURRENT));
            byte[] body = (refuse ? "{\"status\":503,\"active\":\"" + active + "\"}" : REGISTRATION).getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(refuse ? 503 : 200, body.length);
            ex.getResponseBody().write(body);
            ex.close();
        });
        standby.start();
        return "http://127.0.0.1:" + standby.getAddress().getPort();
    }

    @AfterEach
    void stop() {
        if (standby != null) standby.stop(0);
    }

    private static String deadReplica() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return "http://127.0.0.1:" + s.getLocalPort();   // closed again: connections are refused
        }
    }

    private static RegisterRequest request() {
        FakeGpuBackend gpus = new FakeGpuBackend("1xA100-80GB", "n1");
        return new RegisterRequest("n1", "test", io.gpupool.agent.gpu.LocalNode.inventory(gpus.discover()), List.of());
    }

    private static HttpServerLink link(String servers, Duration requestTimeout) {
        return new HttpServerLink(ServerList.parse(servers, "--server"), "join",
                new HttpServerLink.Settings(Duration.ofSeconds(2), requestTimeout, 2, Duration.ofMillis(200)), ServerTrust.system());
    }

    @Test
    void a_call_waits_on_the_standby_while_it_names_the_dead_active_and_goes_through_once_it_has_taken_over() throws Exception {
        String dead = deadReplica();
        String b = standby(dead, 5);
        HttpServerLink link = link(dead + "," + b, Duration.ofSeconds(10));
        long t0 = System.nanoTime();
        assertThat(link.register(request()).nodeId()).isEqualTo("n1");
        long ms = Duration.ofNanos(System.nanoTime() - t0).toMillis();
        assertThat(calls.get()).as("five refusals, then the takeover's answer").isEqualTo(6);
        // 5 pauses of 100 ms, and no growing back-off between the replicas (200 + 400 + ... ms)
        assertThat(ms).isLessThan(5 * HttpServerLink.TAKEOVER_POLL_MS + 1500);
        assertThat(link.server().toString()).isEqualTo(b);
    }

    @Test
    void the_wait_for_a_takeover_ends_with_the_request_time_out() throws Exception {
        String dead = deadReplica();
        String b = standby(dead, Integer.MAX_VALUE);
        HttpServerLink link = link(dead + "," + b, Duration.ofMillis(800));
        long t0 = System.nanoTime();
        LinkException e = catchThrowableOfType(LinkException.class, () -> link.register(request()));
        assertThat(e.kind()).isEqualTo(LinkException.Kind.UNREACHABLE);
        assertThat(Duration.ofNanos(System.nanoTime() - t0).toMillis()).isLessThan(800 + 5_000);
    }
}
