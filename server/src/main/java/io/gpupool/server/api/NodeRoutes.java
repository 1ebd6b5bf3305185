package io.gpupool.server.api;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.NodeSpec;
import io.gpupool.server.auth.Principal;
import io.gpupool.server.auth.Role;
import io.gpupool.server.core.Fields;
import io.gpupool.server.core.GpuTelemetry;
import io.gpupool.server.core.NodeCodec;
import io.gpupool.server.core.PoolService;
import io.gpupool.server.core.PoolSnapshot;
import io.gpupool.server.core.ServiceClock;
import io.gpupool.server.core.ServiceException;
import io.gpupool.store.JobRow;
import io.gpupool.store.NodeRow;
import io.gpupool.store.Store;
import io.javalin.http.Context;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static io.gpupool.server.api.Requests.await;

/**
 * Nodes and the pool: the pool snapshot and its history (everyone), cordon/uncordon/drain (admin), and the
 * node agents' side: register with a join token, report telemetry, read assignments, report job ends and
 * logs (agent tokens; admins too, for tooling).
 */
final class NodeRoutes {
    private static final Set<String> TELEMETRY_FIELDS = Set.of("gpus");
    private static final Set<String> SAMPLE_FIELDS = Set.of("index", "utilPercent", "fbUsedMib", "fbFreeMib", "powerWatts", "tempC");
    private static final Set<String> STATUS_FIELDS = Set.of("state", "exitCode", "message");
    private static final Set<String> LOG_FIELDS = Set.of("lines");
    private final PoolService pool;
    private final Store store;
    private final GpuCatalog catalog;
    private final GpuTelemetry telemetry;
    private final ServiceClock clock;

    NodeRoutes(PoolService pool, Store store, GpuCatalog catalog, GpuTelemetry telemetry, ServiceClock clock) {
        this.pool = pool;
        this.store = store;
        this.catalog = catalog;
        this.telemetry = telemetry;
        this.clock = clock;
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
        r.post("/api/v1/agents/register", this::registerAgent);
        r.put("/api/v1/nodes/{name}/telemetry", this::telemetry);
        r.get("/api/v1/nodes/{name}/assignments", this::assignments);
        r.post("/api/v1/jobs/{id}/status", this::jobStatus);
        r.post("/api/v1/jobs/{id}/logs", this::jobLogs);
    }

    private void pool(Context ctx) {
        Principal p = Requests.require(ctx, "read the pool", Role.ADMIN, Role.MEMBER);
        Json.send(ctx, 200, pool.snapshot().visibleTo(p));
    }

    private void nodes(Context ctx) {
        Principal p = Requests.principal(ctx);
        PoolSnapshot s = p.role() == Role.AGENT ? pool.snapshot().visibleTo(new Principal(p.tokenId(), Role.MEMBER, "")) : pool.snapshot().visibleTo(p);
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

    private void registerAgent(Context ctx) {
        Requests.require(ctx, "register nodes", Role.AGENT, Role.ADMIN);
        NodeSpec spec = NodeCodec.parse(Requests.json(ctx), catalog);
        NodeRow row = await(pool.registerNode(spec, "agent"));
        Json.send(ctx, 200, Map.of("node", row.name(), "source", row.source(), "registeredMs", row.registeredMs(), "cordoned", row.cordoned()));
    }

    private void telemetry(Context ctx) {
        Requests.require(ctx, "report telemetry", Role.AGENT, Role.ADMIN);
        String node = ctx.pathParam("name");
        Integer gpuCount = node.length() > 253 ? null : await(pool.gpuCount(node));
        if (gpuCount == null) throw ServiceException.notFound("node '" + Requests.clip(node) + "'");
        Fields f = Fields.of(Requests.json(ctx), "", TELEMETRY_FIELDS);
        if (!f.has("gpus")) throw ServiceException.invalid("gpus", "is required");
        JsonNode arr = f.array("gpus", gpuCount);
        List<Runnable> puts = new ArrayList<>();
        long now = clock.now();
        for (int i = 0; i < arr.size(); i++) {
            Fields g = Fields.of(arr.get(i), "gpus[" + i + "]", SAMPLE_FIELDS);
            if (!g.has("index")) throw ServiceException.invalid(g.path("index"), "is required");
            int index = (int) g.integer("index", 0, 0, gpuCount - 1);
            GpuTelemetry.Sample s = new GpuTelemetry.Sample(g.number("utilPercent", 0, 0, 100), g.integer("fbUsedMib", 0, 0, 1L << 40),
                    g.integer("fbFreeMib", 0, 0, 1L << 40), g.number("powerWatts", 0, 0, 100_000), g.number("tempC", 0, -50, 200), now);
            puts.add(() -> telemetry.put(node, index, s));
        }
        puts.forEach(Runnable::run); // all or nothing: applied only after every sample validated
        Json.send(ctx, 200, Map.of("node", node, "accepted", arr.size()));
    }

    private void assignments(Context ctx) {
        Requests.require(ctx, "read assignments", Role.AGENT, Role.ADMIN);
        String node = ctx.pathParam("name");
        Json.send(ctx, 200, Map.of("node", node, "assignments", await(pool.assignments(node))));
    }

    private void jobStatus(Context ctx) {
        Requests.require(ctx, "report job status", Role.AGENT, Role.ADMIN);
        String id = ctx.pathParam("id");
        Fields f = Fields.of(Requests.json(ctx), "", STATUS_FIELDS);
        String state = f.string("state", null, 16);
        if (state == null || !(state.equals("SUCCEEDED") || state.equals("FAILED"))) {
            throw ServiceException.invalid("state", "must be SUCCEEDED or FAILED");
        }
        Integer exit = f.has("exitCode") ? (int) f.integer("exitCode", 0, -1_000_000, 1_000_000) : null;
        String message = f.string("message", null, 2000);
        if (id.length() > 32 || store.job(id).isEmpty()) throw ServiceException.notFound("job '" + Requests.clip(id) + "'");
        JobRow row = await(pool.finish(id, state.equals("SUCCEEDED"), exit, message));
        Json.send(ctx, 200, JobJson.of(row, null));
    }

    private void jobLogs(Context ctx) {
        Requests.require(ctx, "append logs", Role.AGENT, Role.ADMIN);
        String id = ctx.pathParam("id");
        Fields f = Fields.of(Requests.json(ctx), "", LOG_FIELDS);
        if (!f.has("lines")) throw ServiceException.invalid("lines", "is required");
        JsonNode arr = f.array("lines", 1000);
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < arr.size(); i++) {
            if (!arr.get(i).isTextual()) throw ServiceException.malformed("lines[" + i + "]", "must be a string");
            if (arr.get(i).textValue().length() > 8192) throw ServiceException.invalid("lines[" + i + "]", "must be at most 8192 characters");
            lines.add(arr.get(i).textValue());
        }
        if (id.length() > 32 || store.job(id).isEmpty()) throw ServiceException.notFound("job '" + Requests.clip(id) + "'");
        await(pool.appendLogs(id, lines));
        Json.send(ctx, 200, Map.of("jobId", id, "accepted", lines.size()));
    }
}
