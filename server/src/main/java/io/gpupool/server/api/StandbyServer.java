package io.gpupool.server.api;

import io.gpupool.server.ha.Replica;
import io.gpupool.server.tls.TlsFiles;
import io.javalin.Javalin;
import io.javalin.http.Context;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpHeaderValue;

import java.util.Map;

/**
 * What a standby replica serves on its port until it takes over (then it closes and the full {@link ApiServer} opens
 * on the same port): {@code /healthz} (role standby, the active's URL), {@code /readyz} (503), {@code /metrics} (the
 * role), the dashboard's files, and for every API call 503 with {@code Retry-After: 1}, the active's URL in the
 * {@value Replica#ACTIVE_HEADER} header and in the body's {@code active}: clients and agents move to it.
 */
public final class StandbyServer implements AutoCloseable {
    /**
     * How long a takeover waits for the standby's connections to get their answers before it cuts them off. A standby
     * answers at once and closes every connection after its answer, so this is reached only by a client that connected
     * and did not send its request.
     */
    static final long ANSWER_MS = 2000;

    private final Javalin app;
    private final boolean secure;
    private ListenerConnections connections;

    public StandbyServer(String host, int port, TlsFiles.Identity tls, Replica replica) {
        this.secure = tls != null;
        this.app = Javalin.create(cfg -> {
            // one request per connection: a client's next request opens a new one, which after a takeover reaches the
            // active's listener, and a takeover waits only for the requests under way (close)
            cfg.jetty.modifyHttpConfiguration(http -> http.addCustomizer((request, responseHeaders) -> {
                responseHeaders.put(HttpHeader.CONNECTION, HttpHeaderValue.CLOSE.asString());
                return request;
            }));
            connections = ApiServer.listener(cfg, host, port, tls, replica);
            // after the listener's: a standby's own failures are 503s naming the active, never 500s. Its stop is not graceful:
            // a graceful one stops accepting but keeps its socket in the port's SO_REUSEPORT group meanwhile, where the kernel
            // goes on queueing new connections that nobody accepts (seen: takeovers seconds slower)
            cfg.jetty.modifyServer(server -> server.setErrorHandler(new JsonErrorHandler(replica)));
            cfg.jetty.modifyServletContextHandler(context -> context.setErrorHandler(new JsonErrorHandler(replica)));
            cfg.routes.exception(Exception.class, (e, ctx) -> refuse(ctx, replica));
            cfg.routes.before("/api/*", ctx -> {
                refuse(ctx, replica);
                ctx.skipRemainingHandlers();
            });
            cfg.routes.get("/healthz", ctx -> Json.send(ctx, 200, replica.health()));
            cfg.routes.get("/readyz", ctx -> {
                ctx.header(Replica.ACTIVE_HEADER, replica.activeUrl());
                Json.send(ctx, 503, Map.of("status", "standby", "active", replica.activeUrl()));
            });
            cfg.routes.get("/metrics", ctx -> ctx.contentType("text/plain; version=0.0.4; charset=utf-8").result(metrics(replica)));
        });
    }

    /** 503 naming the active replica: the API is served there. */
    static void refuse(Context ctx, Replica replica) {
        ctx.header("Retry-After", "1");
        ctx.header(Replica.ACTIVE_HEADER, replica.activeUrl());
        Json.send(ctx, 503, refusal(replica));
    }

    /** The body of a standby's 503: the error, and the active replica's URL in {@code active} (empty while one is chosen). */
    static Map<String, Object> refusal(Replica replica) {
        String active = replica.activeUrl();
        Map<String, Object> body = ErrorBody.of(503, null, "this replica is a standby; the active replica is "
                + (active.isEmpty() ? "being chosen" : active));
        body.put("active", active);
        return body;
    }

    /** The replica's gauges in Prometheus' text format (a standby has no engine and no store writer to show). */
    static String metrics(Replica replica) {
        return "# HELP gpupool_replica_active 1 while this replica is the active one, 0 while it is a standby\n"
                + "# TYPE gpupool_replica_active gauge\n"
                + "gpupool_replica_active " + (replica.role() == Replica.Role.ACTIVE ? 1 : 0) + "\n"
                + "# HELP gpupool_replica_epoch The lease epoch this replica holds (0: none)\n"
                + "# TYPE gpupool_replica_epoch gauge\n"
                + "gpupool_replica_epoch " + replica.epoch() + "\n"
                + "# HELP gpupool_replica_takeovers_total Takeovers of the lease by this replica\n"
                + "# TYPE gpupool_replica_takeovers_total counter\n"
                + "gpupool_replica_takeovers_total " + replica.takeovers() + "\n";
    }

    public StandbyServer start() {
        app.start();
        return this;
    }

    public int port() { return app.port(); }

    /** Connections this listener took in and has not closed yet. */
    int openConnections() { return connections.openCount(); }

    public String scheme() { return secure ? "https" : "http"; }

    /**
     * At a takeover, once the active's listener shares the port: the standby's listening socket closes first (new
     * connections go to the active's), the requests it took in get their answers (at most {@link #ANSWER_MS}), then it
     * stops.
     */
    @Override
    public void close() {
        connections.closePort();
        connections.awaitClosed(ANSWER_MS);
        app.stop();
        connections.closeLeftovers();
    }
}
