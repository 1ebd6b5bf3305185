package io.gpupool.cli;

import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The command line's client with several replicas ({@code --server URL1,URL2}): it moves past a replica it cannot
 * reach and from a standby (503 naming the active replica) to the active one, sending the same Idempotency-Key.
 */
class ApiClientFailoverTest {
    private final List<HttpServer> servers = new CopyOnWriteArrayList<>();
    private final List<String> seen = new CopyOnWriteArrayList<>();

    @AfterEach
    void stop() {
        servers.forEach(s -> s.stop(0));
    }

    /** A replica on loopback: the standby answers 503 naming {@code active}; the active one answers 201. */
    private String replica(String name, boolean standby, String[] active) throws IOException {
        HttpServer s = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        s.createContext("/", ex -> {
            seen.add(name + " " + ex.getRequestMethod() + " " + ex.getRequestURI().getPath() + " key=" + ex.getRequestHeaders().getFirst("Idempotency-Key"));
            byte[] body;
            if (standby) {
                ex.getResponseHeaders().add("X-Gpupool-Active", active[0]);
                ex.getResponseHeaders().add("Retry-After", "1");
                body = "{\"status\":503,\"message\":\"this replica is a standby\"}".getBytes(StandardCharsets.UTF_8);
                ex.sendResponseHeaders(503, body.length);
            } else {
                body = "{\"id\":\"j7\",\"state\":\"PENDING\"}".getBytes(StandardCharsets.UTF_8);
                ex.sendResponseHeaders(201, body.length);
            }
            ex.getResponseBody().write(body);
            ex.close();
        });
        s.start();
        servers.add(s);
        return "http://127.0.0.1:" + s.getAddress().getPort();
    }

    private static String closedPort() throws IOException {
        try (ServerSocket free = new ServerSocket(0)) {
            return "http://127.0.0.1:" + free.getLocalPort();
        }
    }

    @Test
    void a_submission_moves_from_a_standby_to_the_active_replica_it_names_with_the_same_key() throws Exception {
        String[] active = {null};
        String standby = replica("standby", true, active);
        active[0] = replica("active", false, active);
        ApiClient api = new ApiClient(standby + "," + active[0], "gp_x_token");
        assertThat(api.post("/api/v1/jobs", Map.of("numGpus", 1), "k-1").path("id").asText()).isEqualTo("j7");
        assertThat(seen).containsExactly("standby POST /api/v1/jobs key=k-1", "active POST /api/v1/jobs key=k-1");
        assertThat(api.server()).isEqualTo(active[0]);
    }

    @Test
    void an_unreachable_replica_is_passed_over() throws Exception {
        String down = closedPort();
        String up = replica("active", false, new String[] {null});
        ApiClient api = new ApiClient(down + "," + up, "gp_x_token");
        assertThat(api.get("/api/v1/jobs/j7").path("id").asText()).isEqualTo("j7");
        assertThat(seen).containsExactly("active GET /api/v1/jobs/j7 key=null");
    }

    @Test
    void a_standby_naming_a_replica_outside_the_list_is_not_followed() throws Exception {
        String[] elsewhere = {null};
        elsewhere[0] = replica("outsider", false, elsewhere);   // would answer 201: the token must not go there
        String standby = replica("standby", true, elsewhere);
        String other = replica("active", false, elsewhere);
        ApiClient api = new ApiClient(standby + "," + other, "gp_x_token");
        assertThat(api.post("/api/v1/jobs", Map.of("numGpus", 1), "k-2").path("id").asText()).isEqualTo("j7");
        assertThat(seen).containsExactly("standby POST /api/v1/jobs key=k-2", "active POST /api/v1/jobs key=k-2");
    }
}
