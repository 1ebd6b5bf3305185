package io.gpupool.server.api;

import io.gpupool.agent.protocol.AgentProtocolVersion;
import io.gpupool.model.BuildInfo;
import io.gpupool.model.GpuCatalog;
import io.gpupool.server.auth.Principal;
import io.gpupool.server.auth.RateLimiter;
import io.gpupool.server.auth.Tokens;
import io.gpupool.server.core.AgentSettings;
import io.gpupool.server.core.PoolService;
import io.gpupool.server.core.ServiceClock;
import io.gpupool.server.core.ServiceException;
import io.gpupool.server.core.ServiceException.Kind;
import io.gpupool.server.ha.Replica;
import io.gpupool.server.metrics.ServiceMetrics;
import io.gpupool.server.tls.HttpsConnector;
import io.gpupool.server.tls.TlsFiles;
import io.gpupool.store.Store;
import io.gpupool.store.StoreException;
import io.javalin.Javalin;
import io.javalin.http.Context;
import io.javalin.http.HttpResponseException;
import io.javalin.http.staticfiles.Location;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.ServerConnector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The HTTP side: Javalin on Jetty 12 with virtual threads, HTTPS instead of HTTP when given a TLS identity. Every /api/v1 call is authenticated (Bearer
 * token) and rate limited per token; every failure is a JSON error {@code {status, error, field, rule,
 * message}} with a 4xx status for anything the caller got wrong. Public: the dashboard (/), /healthz,
 * /readyz, /metrics, /openapi.json and /api/v1/version.
 */
public final class ApiServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ApiServer.class);
    /**
     * Connections the kernel may hold for the server before it accepts them. Java's default (50) overflows
     * when a few hundred clients connect at once or the acceptor is briefly held up (a GC pause): the kernel
     * then drops their SYNs and each client waits for its 1 s retransmission (docs/benchmarks.md, "Service").
     * The kernel caps this at net.core.somaxconn.
     */
    static final int ACCEPT_BACKLOG = 1024;

    /**
     * No acceptor threads: the selector accepts, without blocking. Jetty stops an acceptor thread by interrupting it,
     * and a blocking accept interrupted after the kernel accepted a connection throws ClosedByInterruptException and
     * never closes the new socket (ServerSocketChannelImpl.accept): a request in flight at a takeover then waited for
     * its client's time-out (StandbyServerTest: in most of its rounds).
     */
    public static final int ACCEPTORS = 0;

    /**
     * What the active's API and a standby's listener share: the one connector on host:port (HTTP, or HTTPS with
     * {@code tls}; replicas of one service share the port with SO_REUSEPORT, so a takeover opens it before the standby's
     * listener closes), JSON errors also for what Jetty answers before Javalin sees the request, virtual threads and the
     * dashboard's files. Close what the connector leaves open with the returned {@link ListenerConnections} after the
     * stop.
     */
    static ListenerConnections listener(io.javalin.config.JavalinConfig cfg, String host, int port, TlsFiles.Identity tls,
                                        io.gpupool.server.ha.Replica replica) {
        ListenerConnections connections = new ListenerConnections();
        cfg.jetty.addConnector((server, http) -> {
            ServerConnector connector = tls == null ? new ServerConnector(server, ACCEPTORS, -1, new HttpConnectionFactory(http))
                    : HttpsConnector.create(server, http, tls);
            connector.setHost(host);
            connector.setPort(port);
            connector.setReusePort(replica.replicated());
            connector.setAcceptQueueSize(ACCEPT_BACKLOG);
            connections.watch(connector);
            return connector;
        });
        cfg.jetty.modifyServer(server -> server.setErrorHandler(new JsonErrorHandler()));
        cfg.jetty.modifyServletContextHandler(context -> context.setErrorHandler(new JsonErrorHandler()));
        cfg.concurrency.useVirtualThreads = true;
        cfg.startup.showJavalinBanner = false;
        cfg.staticFiles.add(sf -> {
            sf.hostedPath = "/";
            sf.directory = "/public";
            sf.location = Location.CLASSPATH;
        });
        return connections;
    }
    /** Seconds a client waits before it retries after a 503 (the store is down or the service overloaded). */
    static final int RETRY_AFTER_UNAVAILABLE_S = 2;
    static final String VERSION_PATH = "/api/v1/version";
    private final Javalin app;
    private ListenerConnections connections;
    private RouteTable table;
    private final Tokens tokens;
    private final RateLimiter limiter;
    private final boolean secure;

    public ApiServer(String host, int port, PoolService pool, Store store, Tokens tokens, RateLimiter limiter, ServiceMetrics metrics,
                     EventHub hub, GpuCatalog catalog, ServiceClock clock, AgentSettings agentSettings, TlsFiles.Identity tls,
                     boolean allowRootJobs, Replica replica) {
        this.tokens = tokens;
        this.limiter = limiter;
        this.secure = tls != null;
        String openApi = resource("/openapi.json");
        this.app = Javalin.create(cfg -> {
            cfg.jetty.host = host;
            cfg.jetty.port = port;
            connections = listener(cfg, host, port, tls, replica);
            cfg.http.maxRequestSize = 1_048_576L;
            cfg.http.prefer405over404 = true;
            cfg.router.ignoreTrailingSlashes = true;
            cfg.routes.before("/api/v1/agent/*", AgentRoutes::checkProtocol);
            cfg.routes.before("/api/*", this::authenticate);
            cfg.routes.before("/api/*", QueryStrings::check);
            cfg.routes.exception(ServiceException.class, (e, ctx) -> error(ctx, e.kind().status, e.field(), e.rule()));
            cfg.routes.exception(StoreException.class, (e, ctx) -> {
                LOG.warn("store failure: {}", e.getMessage());
                error(ctx, 503, null, "the store is unavailable; retry later");
            });
            cfg.routes.exception(HttpResponseException.class, (e, ctx) -> error(ctx, e.getStatus(), null, e.getMessage()));
            cfg.routes.exception(Exception.class, (e, ctx) -> {
                LOG.error("unexpected failure", e);
                error(ctx, 500, null, "internal error: " + e.getClass().getSimpleName());
            });
            cfg.routes.error(404, ctx -> {
                if (ctx.path().startsWith("/api/") && ctx.result() == null) error(ctx, 404, null, "no such endpoint: " + Requests.clip(ctx.path()));
            });
            cfg.routes.error(405, ctx -> error(ctx, 405, null, "method " + ctx.method() + " is not allowed on " + Requests.clip(ctx.path())));
            RouteTable r = new RouteTable(cfg.routes);
            r.get("/healthz", ctx -> Json.send(ctx, 200, replica.health()));
            r.get("/readyz", ctx -> {
                boolean ready = pool.alive() && store.ready();
                Json.send(ctx, ready ? 200 : 503, Map.of("status", ready ? "ready" : "not ready", "store", store.database().dialect().name().toLowerCase()));
            });
            r.get("/metrics", ctx -> ctx.contentType(metrics.contentType()).result(metrics.scrape() + StandbyServer.metrics(replica)));
            r.get("/openapi.json", ctx -> ctx.contentType("application/json").result(openApi));
            r.get(VERSION_PATH, ctx -> Json.send(ctx, 200, versionBody()));
            new JobRoutes(pool, store, catalog, allowRootJobs).register(r);
            new JobEditRoutes(pool, store, catalog).register(r);
            new NodeRoutes(pool).register(r);
            new UsageRoutes(new io.gpupool.store.UsageStore(store.database()), clock).register(r);
            new HistoryRoutes(new io.gpupool.store.UsageStore(store.database()), pool, clock, catalog).register(r);
            new AgentRoutes(pool, store, tokens, catalog, clock, agentSettings).register(r);
            new AdminRoutes(pool, tokens, store.writer(), clock, allowRootJobs).register(r);
            new ReservationRoutes(pool, catalog, clock).register(r);
            r.get("/api/v1/events", hub::stream);
            this.table = r;
        });
    }

    public ApiServer start() {
        try {
            app.start();
        } catch (RuntimeException e) {
            for (Throwable t = e; t != null; t = t.getCause()) {
                if (t instanceof java.net.BindException) {
                    throw new io.gpupool.model.SpecException("--port", "port", "cannot listen there: " + t.getMessage() + " (another server running?)");
                }
            }
            throw e;
        }
        return this;
    }

    public int port() {
        return app.port();
    }

    /** "https" or "http". */
    public String scheme() {
        return secure ? "https" : "http";
    }

    public RouteTable routes() {
        return table;
    }

    /**
     * This build, readable without a token (as /healthz; Kubernetes' /version is public too): install checks and agents
     * ask it before they hold a token. It tells no more than the release a caller could guess from the API's behaviour.
     */
    private static Map<String, Object> versionBody() {
        BuildInfo b = BuildInfo.current();
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("version", b.version());
        body.put("commit", b.commit());
        body.put("dirty", b.dirty());
        body.put("agentProtocol", AgentProtocolVersion.CURRENT);
        return body;
    }

    private void authenticate(Context ctx) {
        String path = ctx.path();
        if (path.equals(VERSION_PATH) || path.equals(VERSION_PATH + "/")) return;
        String h = ctx.header("Authorization");
        if (h == null || !h.regionMatches(true, 0, "Bearer ", 0, 7)) {
            ctx.header("WWW-Authenticate", "Bearer realm=\"gpupool\"");
            throw new ServiceException(Kind.UNAUTHENTICATED, "Authorization", "a header 'Authorization: Bearer TOKEN' is required");
        }
        Principal p = tokens.lookup(h.substring(7).trim()).orElseThrow(() -> {
            ctx.header("WWW-Authenticate", "Bearer realm=\"gpupool\", error=\"invalid_token\"");
            return new ServiceException(Kind.UNAUTHENTICATED, "Authorization", "the token is not valid");
        });
        if (!limiter.tryAcquire(p.tokenId())) {
            ctx.header("Retry-After", String.valueOf(limiter.retryAfterSeconds()));
            throw new ServiceException(Kind.RATE_LIMITED, null, "too many requests for this token; slow down");
        }
        ctx.attribute(Requests.PRINCIPAL, p);
    }

    private static void error(Context ctx, int status, String field, String rule) {
        if (status == 503) ctx.header("Retry-After", String.valueOf(RETRY_AFTER_UNAVAILABLE_S));
        Json.send(ctx, status, ErrorBody.of(status, field, rule));
    }

    private static String resource(String path) {
        try (InputStream in = ApiServer.class.getResourceAsStream(path)) {
            if (in == null) throw new IllegalStateException("missing resource " + path);
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + path, e);
        }
    }

    @Override
    public void close() {
        app.stop();
        connections.closeLeftovers();
    }
}
