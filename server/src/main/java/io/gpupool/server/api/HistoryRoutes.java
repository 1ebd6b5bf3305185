package io.gpupool.server.api;

import io.gpupool.engine.config.PoolConfig;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.NodeSpec;
import io.gpupool.server.auth.Principal;
import io.gpupool.server.auth.Role;
import io.gpupool.server.core.NodeCodec;
import io.gpupool.server.core.PoolService;
import io.gpupool.server.core.SchedulerSettings;
import io.gpupool.server.core.ServiceClock;
import io.gpupool.server.core.ServiceException;
import io.gpupool.server.history.History;
import io.gpupool.server.history.WhatIf;
import io.gpupool.server.usage.UsageWindow;
import io.gpupool.store.TenantRow;
import io.gpupool.store.UsageStore;
import io.javalin.http.Context;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static io.gpupool.server.api.Requests.await;

/**
 * The pool's history as a trace (GET /api/v1/history) and the "what if" on it (GET /api/v1/history/whatif):
 * docs/contracts.md, "History". Access as for usage: a member's own tenant, an admin all or one.
 */
final class HistoryRoutes {
    /** The most finished jobs one export holds. */
    static final int MAX_EXPORT_JOBS = 100_000;

    private final UsageStore usage;
    private final PoolService pool;
    private final ServiceClock clock;
    private final GpuCatalog catalog;
    private final WhatIf whatIf = new WhatIf();

    HistoryRoutes(UsageStore usage, PoolService pool, ServiceClock clock, GpuCatalog catalog) {
        this.usage = usage;
        this.pool = pool;
        this.clock = clock;
        this.catalog = catalog;
    }

    void register(RouteTable r) {
        r.get("/api/v1/history", this::export);
        r.get("/api/v1/history/whatif", this::whatIf);
    }

    private History read(Context ctx, Principal p, int limit) {
        String tenant = UsageRoutes.visibleTenant(p, ctx.queryParam("tenant"), "history");
        UsageWindow w = UsageWindow.parse(ctx.queryParam("since"), ctx.queryParam("until"), clock.now());
        return History.read(usage, w, tenant, limit, catalog);
    }

    /** CSV ({@code format=csv}) or JSON: the window, what was left out, the pool's nodes and configuration, the trace. */
    private void export(Context ctx) {
        Principal p = Requests.require(ctx, "read the history", Role.ADMIN, Role.MEMBER);
        String format = ctx.queryParam("format");
        if (format != null && !format.equals("json") && !format.equals("csv")) {
            throw ServiceException.malformed("format", "must be json or csv, got '" + Requests.clip(format) + "'");
        }
        History h = read(ctx, p, MAX_EXPORT_JOBS);
        if ("csv".equals(format)) {
            ctx.status(200).contentType("text/csv; charset=utf-8").result(h.csv());
            return;
        }
        SchedulerSettings settings = await(pool.settings());
        List<TenantRow> tenants = await(pool.tenants());
        List<Object> nodes = new ArrayList<>();
        for (NodeSpec n : await(pool.nodeSpecs())) nodes.add(NodeCodec.toNode(n));
        Map<String, Object> m = head(h);
        m.put("policy", settings.policy());
        m.put("config", settings.toTree(tenants));
        m.put("nodes", nodes);
        m.put("trace", h.csv());
        Json.send(ctx, 200, m);
    }

    /** The record and each policy's replay of it, on the pool's nodes with its configuration. */
    private void whatIf(Context ctx) {
        Principal p = Requests.require(ctx, "compare policies on the history", Role.ADMIN, Role.MEMBER);
        SchedulerSettings settings = await(pool.settings());
        List<String> policies = WhatIf.policies(ctx.queryParam("policy"), settings.policy());
        History h = read(ctx, p, WhatIf.MAX_JOBS);
        PoolConfig config = settings.tree().withTenants(SchedulerSettings.tenantConfigs(await(pool.tenants())));
        var results = whatIf.compare(h, await(pool.nodeSpecs()), config, policies);
        Map<String, Object> m = head(h);
        m.put("policy", settings.policy());
        m.put("results", WhatIf.rows(results));
        Json.send(ctx, 200, m);
    }

    private static Map<String, Object> head(History h) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("since", Instant.ofEpochMilli(h.window().sinceMs()).toString());
        m.put("until", Instant.ofEpochMilli(h.window().untilMs()).toString());
        m.put("tenant", h.tenant());
        m.put("origin", Instant.ofEpochMilli(h.originMs()).toString());
        m.put("jobs", h.jobs().size());
        m.put("leftOut", h.leftOut());
        return m;
    }
}
