package io.gpupool.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpupool.agent.link.ServerList;
import io.gpupool.agent.tls.ConnectFailure;
import io.gpupool.agent.tls.ServerTrust;
import io.gpupool.model.SpecException;

import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;

/**
 * The command line's client of the REST API. Server URL and token come from the options, else the
 * environment (GPUPOOL_SERVER, GPUPOOL_TOKEN), else ~/.config/gpupool/client.properties (server=, token=).
 * An https:// server's certificate must be signed by the CA of --ca / GPUPOOL_CA / ca= (a PEM file), else by one
 * the system trust store holds, and name the URL's host. An error answer becomes a {@link SpecException} with the server's message (exit 2).
 *
 * <p>Several replicas ({@code --server URL1,URL2}): a call that cannot connect, or that a standby answers (503 naming the
 * active replica), goes to the active one or the next, for up to {@value #FAILOVER_S} s (a takeover takes a few). A call
 * whose request may have reached a server (the connection broke during it) is tried again only when that cannot do it
 * twice: a GET, or a call with an Idempotency-Key.
 */
final class ApiClient {
    static final int FAILOVER_S = 20;
    /** How often a call asks a standby again while the active replica it names cannot be reached (a takeover is under way). */
    static final long TAKEOVER_POLL_MS = 100;
    private final HttpClient http;
    private final ServerList servers;
    private final String token;
    private final ServerTrust trust;

    ApiClient(String serverOption, String tokenOption) {
        this(serverOption, tokenOption, null);
    }

    ApiClient(String serverOption, String tokenOption, Path caOption) {
        Properties file = new Properties();
        Path cfg = Path.of(System.getProperty("user.home"), ".config", "gpupool", "client.properties");
        if (Files.isRegularFile(cfg)) {
            try (InputStream in = Files.newInputStream(cfg)) {
                file.load(in);
            } catch (IOException e) {
                throw new SpecException(cfg.toString(), null, "cannot be read: " + e.getMessage());
            }
        }
        this.servers = ServerList.parse(first(serverOption, System.getenv("GPUPOOL_SERVER"), file.getProperty("server"), "http://localhost:8080"), "--server");
        this.token = first(tokenOption, System.getenv("GPUPOOL_TOKEN"), file.getProperty("token"), null);
        if (token == null) throw new SpecException("--token", "token", "is required (or GPUPOOL_TOKEN, or token= in " + cfg + ")");
        String ca = caOption != null ? caOption.toString() : first(System.getenv("GPUPOOL_CA"), file.getProperty("ca"));
        this.trust = ServerTrust.of(ca == null ? null : Path.of(ca));
        this.http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).sslContext(trust.sslContext()).build();
    }

    /** The replica calls go to now. */
    String server() { return servers.current().toString(); }

    /** Which certificates an https:// server may show. */
    ServerTrust trust() { return trust; }

    JsonNode get(String path) { return send("GET", path, null, null); }
    JsonNode delete(String path) { return send("DELETE", path, null, null); }
    JsonNode patch(String path, Object body) { return send("PATCH", path, body, null); }
    JsonNode post(String path, Object body, String idempotencyKey) { return send("POST", path, body, idempotencyKey); }

    private JsonNode send(String method, String path, Object body, String idempotencyKey) {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(FAILOVER_S);
        java.util.Set<URI> tried = new java.util.HashSet<>();
        java.util.Map<URI, Long> unreachable = new java.util.HashMap<>();
        while (true) {
            URI at = servers.current();
            String server = at.toString();
            if (!tried.add(at)) {
                // every replica was tried once: wait a moment before the next round (a takeover is under way)
                if (System.nanoTime() > deadline) throw new SpecException(server, null, "no replica of the service answers as the active one");
                pause(500);
                tried.clear();
                tried.add(at);
            }
            HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(server + path)).timeout(Duration.ofSeconds(30))
                    .header("Authorization", "Bearer " + token).header("Accept", "application/json");
            if (idempotencyKey != null) b.header("Idempotency-Key", idempotencyKey);
            try {
                if (body != null) {
                    b.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(Json.MAPPER.writeValueAsString(body)));
                } else {
                    b.method(method, HttpRequest.BodyPublishers.noBody());
                }
                HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
                var active = r.headers().firstValue(ServerList.ACTIVE_HEADER);
                if (r.statusCode() == 503 && active.isPresent() && System.nanoTime() < deadline) {
                    if (ServerList.awaitsTakeover(active.get(), unreachable)) {
                        // the active it names is gone: a takeover is under way; ask this standby again shortly
                        pause(TAKEOVER_POLL_MS);
                        tried.remove(at);
                    } else {
                        servers.follow(at, active.get());   // a standby: nothing was done there
                    }
                    continue;
                }
                JsonNode json = r.body().isEmpty() ? Json.MAPPER.nullNode() : Json.MAPPER.readTree(r.body());
                if (r.statusCode() >= 400) {
                    String msg = json.path("message").asText(r.body());
                    throw new SpecException(server, null, "HTTP " + r.statusCode() + ": " + msg);
                }
                return json;
            } catch (ConnectException e) {
                unreachable.put(at, System.nanoTime());
                if (servers.size() > 1 && System.nanoTime() < deadline) {
                    servers.next(at);
                    continue;
                }
                throw new SpecException(server, null, "cannot connect (is `gpupool server` running there?)");
            } catch (IOException e) {
                String tls = ConnectFailure.describe(at, trust, e);
                if (tls != null) throw new SpecException(null, null, tls);
                boolean once = method.equals("GET") || idempotencyKey != null;
                unreachable.put(at, System.nanoTime());
                if (servers.size() > 1 && once && System.nanoTime() < deadline) {
                    servers.next(at);
                    continue;
                }
                throw new SpecException(server, null, "request failed: " + e.getMessage());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new SpecException(server, null, "interrupted");
            }
        }
    }

    private static void pause(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SpecException(null, null, "interrupted");
        }
    }

    private static String first(String... values) {
        for (String v : values) if (v != null && !v.isBlank()) return v;
        return null;
    }

}
