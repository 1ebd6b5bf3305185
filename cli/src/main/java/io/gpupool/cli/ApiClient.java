package io.gpupool.cli;

import com.fasterxml.jackson.databind.JsonNode;
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
 */
final class ApiClient {
    private final HttpClient http;
    private final String server;
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
        this.server = strip(first(serverOption, System.getenv("GPUPOOL_SERVER"), file.getProperty("server"), "http://localhost:8080"));
        this.token = first(tokenOption, System.getenv("GPUPOOL_TOKEN"), file.getProperty("token"), null);
        if (token == null) throw new SpecException("--token", "token", "is required (or GPUPOOL_TOKEN, or token= in " + cfg + ")");
        String ca = caOption != null ? caOption.toString() : first(System.getenv("GPUPOOL_CA"), file.getProperty("ca"));
        this.trust = ServerTrust.of(ca == null ? null : Path.of(ca));
        this.http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).sslContext(trust.sslContext()).build();
    }

    String server() { return server; }

    /** Which certificates an https:// server may show. */
    ServerTrust trust() { return trust; }

    JsonNode get(String path) { return send("GET", path, null, null); }
    JsonNode delete(String path) { return send("DELETE", path, null, null); }
    JsonNode post(String path, Object body, String idempotencyKey) { return send("POST", path, body, idempotencyKey); }

    private JsonNode send(String method, String path, Object body, String idempotencyKey) {
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
            JsonNode json = r.body().isEmpty() ? Json.MAPPER.nullNode() : Json.MAPPER.readTree(r.body());
            if (r.statusCode() >= 400) {
                String msg = json.path("message").asText(r.body());
                throw new SpecException(server, null, "HTTP " + r.statusCode() + ": " + msg);
            }
            return json;
        } catch (ConnectException e) {
            throw new SpecException(server, null, "cannot connect (is `gpupool server` running there?)");
        } catch (IOException e) {
            String tls = ConnectFailure.describe(URI.create(server), trust, e);
            if (tls != null) throw new SpecException(null, null, tls);
            throw new SpecException(server, null, "request failed: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SpecException(server, null, "interrupted");
        }
    }

    private static String first(String... values) {
        for (String v : values) if (v != null && !v.isBlank()) return v;
        return null;
    }

    private static String strip(String url) {
        return url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
    }
}
