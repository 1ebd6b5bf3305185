package io.gpupool.agent.link;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.gpupool.agent.protocol.AgentProtocolVersion;
import io.gpupool.agent.protocol.NodeReport;
import io.gpupool.agent.protocol.ProtocolJson;
import io.gpupool.agent.protocol.RegisterRequest;
import io.gpupool.agent.protocol.Registration;
import io.gpupool.agent.protocol.ReportResponse;
import io.gpupool.agent.tls.ConnectFailure;
import io.gpupool.agent.tls.ServerTrust;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * The agent protocol over HTTP (docs/architecture.md, "Agent protocol"), with the JDK's HTTP client:
 * {@code POST /api/v1/agent/register} with the join token, then {@code POST /api/v1/agent/nodes/{id}/report}
 * with the node's own credential from the registration.
 *
 * <p>A call that fails on the way (no connection, a time-out, 429, 502-504) is tried again a few times with
 * growing pauses before it counts as unreachable; the agent loop then keeps its reports and retries at its
 * own pace. Every call is idempotent on the server (statuses by seq, logs by offset), so a retried call whose
 * first answer was lost does no harm. An https:// server must show a certificate that {@link ServerTrust} accepts
 * for the URL's host; a TLS failure is not retried (it is a setting to fix, not an outage).
 *
 * <p>Every call announces the agent protocol version ({@link AgentProtocolVersion}); an answer that names another
 * version, whatever its status, or a 200 that names none (a server of version 1) while the agent speaks another, is a
 * {@link LinkException.Kind#INCOMPATIBLE} failure.
 *
 * <p>Several replicas of the service ({@code --server URL1,URL2}, {@link ServerList}): a call that cannot reach the
 * current one, or that a standby answers (503 naming the active replica), goes to the active one or the next.
 */
public final class HttpServerLink implements ServerLink {

    /**
     * @param connectTimeout  to open a connection
     * @param requestTimeout  for an answer, on top of the time the server may hold a waiting report
     * @param retries         further tries of a call that failed on the way
     * @param firstBackoff    pause before the first retry; doubled for each next one
     */
    public record Settings(Duration connectTimeout, Duration requestTimeout, int retries, Duration firstBackoff) {
        public static Settings defaults() {
            return new Settings(Duration.ofSeconds(5), Duration.ofSeconds(10), 2, Duration.ofMillis(200));
        }
    }

    private static final Duration CHECK_TIMEOUT = Duration.ofSeconds(2);

    private final ServerList servers;
    private final String joinToken;
    private final Settings settings;
    private final ServerTrust trust;
    private final HttpClient http;
    private final int protocolVersion;
    private volatile String nodeToken;
    /** The report in flight and whether it may wait; guarded by this. */
    private CompletableFuture<HttpResponse<String>> inFlight;
    private boolean inFlightWaits;
    private boolean woken;

    /**
     * @param server    the server's base URL, e.g. {@code http://gpupool:8080}
     * @param joinToken a token of role {@code agent} (an admin creates it: {@code POST /api/v1/agent-tokens})
     */
    public HttpServerLink(URI server, String joinToken, Settings settings) {
        this(server, joinToken, settings, ServerTrust.system());
    }

    /** As above, trusting the server's TLS certificate as {@code trust} says (for https:// URLs). */
    public HttpServerLink(URI server, String joinToken, Settings settings, ServerTrust trust) {
        this(ServerList.parse(server.toString(), "--server"), joinToken, settings, trust, AgentProtocolVersion.CURRENT);
    }

    /** As above, speaking agent protocol {@code protocolVersion} rather than this build's (tests of the version check). */
    public HttpServerLink(URI server, String joinToken, Settings settings, ServerTrust trust, int protocolVersion) {
        this(ServerList.parse(server.toString(), "--server"), joinToken, settings, trust, protocolVersion);
    }

    /** The replicas of one service; calls go to the active one. */
    public HttpServerLink(ServerList servers, String joinToken, Settings settings, ServerTrust trust) {
        this(servers, joinToken, settings, trust, AgentProtocolVersion.CURRENT);
    }

    /** The replicas of one service, speaking agent protocol {@code protocolVersion}. */
    public HttpServerLink(ServerList servers, String joinToken, Settings settings, ServerTrust trust, int protocolVersion) {
        if (protocolVersion < 1) throw new IllegalArgumentException("protocol versions start at 1, got " + protocolVersion);
        this.protocolVersion = protocolVersion;
        this.servers = servers;
        if (joinToken == null || joinToken.isBlank()) throw new io.gpupool.model.SpecException("--token", "token", "is required");
        this.joinToken = joinToken;
        this.settings = settings;
        this.trust = trust;
        this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(settings.connectTimeout())
                .sslContext(trust.sslContext()).build();
    }

    /** The replica calls go to now. */
    public URI server() {
        return servers.current();
    }

    /**
     * Asks {@code /healthz} once to find a wrong setting before the agent's loop starts: an untrusted certificate,
     * https:// to a plain server or http:// to a TLS one. A server that is down or slow is no reason to fail: the
     * loop keeps trying to reach it.
     *
     * @throws LinkException of kind REJECTED with a one-line message naming the URL and what to fix
     */
    public void checkTransport() throws LinkException {
        // short: a wrong setting shows at once; a slow or held-up server only delays the agent's start this long
        URI server = servers.current();
        HttpRequest req = HttpRequest.newBuilder(URI.create(server + "/healthz")).timeout(CHECK_TIMEOUT).GET().build();
        try {
            HttpResponse<String> r = http.send(req, HttpResponse.BodyHandlers.ofString());
            // the only 400 a health check can get: a TLS server's answer to plain HTTP
            if (r.statusCode() == 400) throw new LinkException(LinkException.Kind.REJECTED, "cannot connect to " + server + ": " + describe(r));
        } catch (IOException e) {
            String tls = ConnectFailure.describe(server, trust, e);
            if (tls != null) throw new LinkException(LinkException.Kind.REJECTED, tls, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LinkException(LinkException.Kind.UNREACHABLE, "interrupted");
        }
    }

    @Override
    public Registration register(RegisterRequest request) throws LinkException {
        HttpResponse<String> r = call("/api/v1/agent/register", joinToken, request, 0, false);
        checkProtocol(r);
        if (r.statusCode() != 200) {
            throw new LinkException(LinkException.Kind.REJECTED, "registration refused: " + describe(r));
        }
        Registration reg = parse(r, Registration.class);
        nodeToken = reg.nodeToken();
        return reg;
    }

    @Override
    public ReportResponse report(NodeReport report) throws LinkException {
        String token = nodeToken;
        if (token == null) throw new LinkException(LinkException.Kind.UNKNOWN_NODE, "not registered in this process yet");
        String path = "/api/v1/agent/nodes/" + URLEncoder.encode(report.nodeId(), StandardCharsets.UTF_8).replace("+", "%20") + "/report";
        HttpResponse<String> r = call(path, token, report, report.waitMs(), true);
        checkProtocol(r);
        return switch (r.statusCode()) {
            case 200 -> parse(r, ReportResponse.class);
            // 401: the credential was replaced (another registration) or the store is new; 404: the node is unknown
            case 401, 404 -> throw new LinkException(LinkException.Kind.UNKNOWN_NODE, "register again: " + describe(r));
            default -> throw new LinkException(LinkException.Kind.REJECTED, "report refused: " + describe(r));
        };
    }

    /** An answer in another protocol version than this agent's cannot be read safely, whatever it says. */
    private void checkProtocol(HttpResponse<String> r) throws LinkException {
        String header = r.headers().firstValue(AgentProtocolVersion.HEADER).orElse(null);
        URI server = URI.create(r.uri().getScheme() + "://" + r.uri().getRawAuthority());   // the replica that answered
        // an error without the header may come from a proxy, not the server: its status says what it is
        if (header == null && r.statusCode() != 200) return;
        int theirs;
        try {
            theirs = AgentProtocolVersion.parse(header);
        } catch (IllegalArgumentException e) {
            throw new LinkException(LinkException.Kind.INCOMPATIBLE, "server " + server + " answered with header "
                    + AgentProtocolVersion.HEADER + " that " + e.getMessage());
        }
        if (theirs != protocolVersion) {
            throw new LinkException(LinkException.Kind.INCOMPATIBLE, AgentProtocolVersion.agentRefuses(server, theirs, protocolVersion));
        }
    }

    @Override
    public void wake() {
        synchronized (this) {
            woken = true;
            if (inFlight != null && inFlightWaits) inFlight.cancel(true);
        }
    }

    /**
     * Sends one call, retrying what failed on the way. Answers other than 429 and 502-504 are returned, for
     * the caller to judge.
     *
     * <p>A failover: the active replica cannot be reached, and a standby names it (or none) as the active. That standby,
     * or another, takes the lease over within moments (its poll, then its start), so the call asks the standby again every
     * {@value #TAKEOVER_POLL_MS} ms, not counted as a try and without the growing pause, for up to the request time-out:
     * the agent reaches the new active as soon as it serves.
     */
    private HttpResponse<String> call(String path, String token, Object body, long waitMs, boolean wakeable) throws LinkException {
        byte[] json = encode(body);
        long backoff = settings.firstBackoff().toMillis();
        LinkException last = null;
        // every replica gets its tries: a standby or a dead replica is passed over, not counted against the active one;
        // a pause comes only before a replica is tried again
        int tries = (settings.retries() + 1) * servers.size();
        java.util.Set<URI> tried = new java.util.HashSet<>();
        java.util.Map<URI, Long> unreachable = new java.util.HashMap<>();
        long takeoverDeadline = System.nanoTime() + settings.requestTimeout().toNanos();
        for (int attempt = 0; attempt < tries; attempt++) {
            URI server = servers.current();
            if (!tried.add(server)) {
                pause(backoff);
                backoff *= 2;
                tried.clear();
                tried.add(server);
            }
            try {
                HttpResponse<String> r = send(server, path, token, body, json, waitMs, wakeable);
                int s = r.statusCode();
                if (s != 429 && s != 502 && s != 503 && s != 504) return r;
                last = new LinkException(LinkException.Kind.UNREACHABLE, server + ": " + describe(r));
                var active = r.headers().firstValue(ServerList.ACTIVE_HEADER);
                if (active.isPresent() && ServerList.awaitsTakeover(active.get(), unreachable) && System.nanoTime() < takeoverDeadline) {
                    pause(TAKEOVER_POLL_MS);   // stays on this standby: the next try goes to it again
                    tried.remove(server);
                    attempt--;
                } else if (active.isPresent()) {
                    servers.follow(server, active.get());   // a standby: to the active replica, or the next
                } else {
                    backoff = Math.max(backoff, retryAfterMs(r));
                }
            } catch (IOException e) {
                String tls = ConnectFailure.describe(server, trust, e);
                if (tls != null) throw new LinkException(LinkException.Kind.REJECTED, tls, e);
                last = new LinkException(LinkException.Kind.UNREACHABLE, server + ": " + e, e);
                unreachable.put(server, System.nanoTime());
                servers.next(server);
            }
        }
        throw last;
    }

    /** How often a call asks a standby again while the active replica it names is gone (a takeover is under way). */
    static final long TAKEOVER_POLL_MS = 100;

    private HttpResponse<String> send(URI server, String path, String token, Object body, byte[] json, long waitMs, boolean wakeable)
            throws IOException, LinkException {
        CompletableFuture<HttpResponse<String>> f;
        synchronized (this) {
            boolean waits = waitMs > 0;
            if (wakeable && woken && waits && body instanceof NodeReport r) {
                json = encode(r.withoutWait()); // news came in before this report went out: do not wait
                waits = false;
                waitMs = 0;
            }
            if (wakeable) woken = false;
            HttpRequest req = HttpRequest.newBuilder(URI.create(server + path))
                    .timeout(settings.requestTimeout().plusMillis(waitMs))
                    .header("Authorization", "Bearer " + token)
                    .header("Content-Type", "application/json")
                    .header(AgentProtocolVersion.HEADER, Integer.toString(protocolVersion))
                    .POST(HttpRequest.BodyPublishers.ofByteArray(json))
                    .build();
            f = http.sendAsync(req, HttpResponse.BodyHandlers.ofString());
            if (wakeable) {
                inFlight = f;
                inFlightWaits = waits;
            }
        }
        try {
            return f.get();
        } catch (CancellationException e) {
            throw new LinkException(LinkException.Kind.WOKEN, "woken");
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IOException io) throw io;
            throw new IOException(e.getCause());
        } catch (InterruptedException e) {
            f.cancel(true);
            Thread.currentThread().interrupt();
            throw new LinkException(LinkException.Kind.UNREACHABLE, "interrupted");
        } finally {
            if (wakeable) {
                synchronized (this) {
                    if (inFlight == f) inFlight = null;
                }
            }
        }
    }

    private static byte[] encode(Object body) throws LinkException {
        try {
            return ProtocolJson.MAPPER.writeValueAsBytes(body);
        } catch (JsonProcessingException e) {
            throw new LinkException(LinkException.Kind.REJECTED, "cannot encode the request: " + e.getOriginalMessage(), e);
        }
    }

    private static <T> T parse(HttpResponse<String> r, Class<T> type) throws LinkException {
        try {
            return ProtocolJson.MAPPER.readValue(r.body(), type);
        } catch (JsonProcessingException e) {
            throw new LinkException(LinkException.Kind.UNREACHABLE, "the server's answer is not a " + type.getSimpleName() + ": "
                    + e.getOriginalMessage(), e);
        }
    }

    /** Status and the server's message (its error bodies are {@code {status, error, field, rule, message}}). */
    private static String describe(HttpResponse<String> r) {
        String msg = r.body();
        try {
            JsonNode j = ProtocolJson.MAPPER.readTree(r.body());
            if (j != null && j.hasNonNull("message")) msg = j.get("message").asText();
        } catch (JsonProcessingException e) {
            // not JSON: show it as it is
        }
        if (msg != null && msg.length() > 300) msg = msg.substring(0, 300) + "...";
        return "HTTP " + r.statusCode() + (msg == null || msg.isBlank() ? "" : ": " + msg);
    }

    private static long retryAfterMs(HttpResponse<String> r) {
        try {
            return r.headers().firstValue("Retry-After").map(v -> Long.parseLong(v.trim()) * 1000).orElse(0L);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private static void pause(long ms) throws LinkException {
        try {
            TimeUnit.MILLISECONDS.sleep(Math.min(ms, 5_000));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LinkException(LinkException.Kind.UNREACHABLE, "interrupted");
        }
    }
}
