package io.gpupool.server.api;

import io.gpupool.server.auth.Principal;
import io.gpupool.server.auth.Role;
import io.gpupool.server.core.PoolService;
import io.gpupool.server.core.PoolSnapshot;
import io.javalin.http.Context;

import java.util.List;
import java.util.Map;

import static io.gpupool.server.api.Requests.await;

/**
 * Nodes and the pool: the pool snapshot and its history, the nodes (everyone), cordon/uncordon/drain (admin).
 * The node agents' calls are {@link AgentRoutes}.
 */
final class NodeRoutes {
    private final PoolService pool;

    NodeRoutes(PoolService pool) {
        this.pool = pool;
    }

    void register(RouteTable r) {
        r.get("/api/v1/pool", this::pool);
        r.get("/api/v1/pool/history", ctx -> {
            Requests.require(ctx, "read the pool", Role.ADMIN, Role.MEMBER);
            Json.send(ctx, 200, Map.of("stepMs", io.gpupool.server.core.PoolHistory.STEP_MS, "points", pool.history().points()));
        });
        r.get("/api/v1/nodes", this::nodes);
        r.post("/api/v1/nodes/{name}/cordon", ctx -> cordon(ctx, true));
        r.post("/api/v1/nodes/{name}/uncordon", ctx -> cordon(ctx, false));
        r.post("/api/v1/nodes/{name}/drain", this::drain);
    }

    private void pool(Context ctx) {
        Principal p = Requests.require(ctx, "read the pool", Role.ADMIN, Role.MEMBER);
        Json.send(ctx, 200, pool.snapshot().visibleTo(p));
    }

    private void nodes(Context ctx) {
        Principal p = Requests.principal(ctx);
        PoolSnapshot s = p.role() == Role.AGENT || p.role() == Role.NODE ? pool.snapshot().visibleTo(new Principal(p.tokenId(), Role.MEMBER, "")) : pool.snapshot().visibleTo(p);
        Json.send(ctx, 200, Map.of("nodes", s.nodes()));
    }

    private void cordon(Context ctx, boolean cordoned) {
        Requests.require(ctx, "cordon nodes", Role.ADMIN);
        String node = ctx.pathParam("name");
        await(pool.setCordoned(node, cordoned));
        Json.send(ctx, 200, Map.of("node", node, "cordoned", cordoned));
    }

    private void drain(Context ctx) {
        Requests.require(ctx, "drain nodes", Role.ADMIN);
        String node = ctx.pathParam("name");
        List<String> moved = await(pool.drain(node));
        Json.send(ctx, 200, Map.of("node", node, "cordoned", true, "requeued", moved));
    }
}
