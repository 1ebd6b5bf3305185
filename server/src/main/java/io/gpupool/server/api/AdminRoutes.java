package io.gpupool.server.api;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpupool.server.auth.Principal;
import io.gpupool.server.auth.Role;
import io.gpupool.server.auth.Tokens;
import io.gpupool.server.core.ConfigChange;
import io.gpupool.server.core.Fields;
import io.gpupool.server.core.PoolService;
import io.gpupool.server.core.SchedulerSettings;
import io.gpupool.server.core.ServiceClock;
import io.gpupool.server.core.ServiceException;
import io.gpupool.server.core.UnixAccount;
import io.gpupool.store.GroupCommitWriter;
import io.gpupool.store.TenantRow;
import io.gpupool.store.Write;
import io.javalin.http.Context;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static io.gpupool.server.api.Requests.await;

/** Tenants, tokens and the scheduler configuration (admin), and who-am-I (everyone). */
final class AdminRoutes {
    private static final Set<String> TENANT_FIELDS = Set.of("name", "weight", "guaranteedGpus", "limitGpus", "sharedAccountNodes",
            "defaultTimeLimit", "maxTimeLimit");
    private static final Set<String> TOKEN_FIELDS = Set.of("label");
    private static final Set<String> MEMBER_TOKEN_FIELDS = Set.of("label", "unixUser");
    private final PoolService pool;
    private final Tokens tokens;
    private final GroupCommitWriter writer;
    private final ServiceClock clock;
    private final boolean allowRootJobs;

    AdminRoutes(PoolService pool, Tokens tokens, GroupCommitWriter writer, ServiceClock clock, boolean allowRootJobs) {
        this.pool = pool;
        this.tokens = tokens;
        this.writer = writer;
        this.clock = clock;
        this.allowRootJobs = allowRootJobs;
    }

    void register(RouteTable r) {
        r.get("/api/v1/whoami", this::whoami);
        r.get("/api/v1/tenants", this::listTenants);
        r.post("/api/v1/tenants", this::createTenant);
        r.put("/api/v1/tenants/{name}", this::updateTenant);
        r.post("/api/v1/tenants/{name}/tokens", this::memberToken);
        r.post("/api/v1/agent-tokens", this::agentToken);
        r.get("/api/v1/config", this::getConfig);
        r.put("/api/v1/config", this::putConfig);
    }

    private void whoami(Context ctx) {
        Principal p = Requests.principal(ctx);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("tokenId", p.tokenId());
        out.put("role", p.role().wire());
        out.put("tenant", p.tenant());
        if (p.unixUser() != null) out.put("unixUser", p.unixUser());
        Json.send(ctx, 200, out);
    }

    private void listTenants(Context ctx) {
        Requests.require(ctx, "list tenants", Role.ADMIN, Role.MEMBER);
        Json.send(ctx, 200, Map.of("tenants", await(pool.tenants())));
    }

    private void createTenant(Context ctx) {
        Requests.require(ctx, "create tenants", Role.ADMIN);
        Fields f = Fields.of(Requests.json(ctx), "", TENANT_FIELDS);
        if (!f.has("name")) throw ServiceException.invalid("name", "is required");
        String name = f.name("name", null);
        TenantRow row = await(pool.putTenant(name, f.number("weight", 1, 1e-6, 1e6), f.number("guaranteedGpus", 0, 0, 1e6),
                f.number("limitGpus", 0, 0, 1e6), f.bool("sharedAccountNodes", false), f.timeLimitSec("defaultTimeLimit", 0),
                f.timeLimitSec("maxTimeLimit", 0), true));
        Json.send(ctx, 201, row);
    }

    private void updateTenant(Context ctx) {
        Requests.require(ctx, "change tenants", Role.ADMIN);
        String name = ctx.pathParam("name");
        Fields f = Fields.of(Requests.json(ctx), "", Set.of("weight", "guaranteedGpus", "limitGpus", "sharedAccountNodes",
                "defaultTimeLimit", "maxTimeLimit"));
        TenantRow old = await(pool.tenants()).stream().filter(t -> t.name().equals(name)).findFirst()
                .orElseThrow(() -> ServiceException.notFound("tenant '" + Requests.clip(name) + "'"));
        TenantRow row = await(pool.putTenant(name, f.number("weight", old.weight(), 1e-6, 1e6),
                f.number("guaranteedGpus", old.guaranteedGpus(), 0, 1e6), f.number("limitGpus", old.limitGpus(), 0, 1e6),
                f.bool("sharedAccountNodes", old.sharedAccountNodes()), timeLimitOrNone(f, "defaultTimeLimit", old.defaultTimeLimitSec()),
                timeLimitOrNone(f, "maxTimeLimit", old.maxTimeLimitSec()), false));
        Json.send(ctx, 200, row);
    }

    /** An update's time limit: absent keeps the old one, JSON null removes it (0). */
    private static long timeLimitOrNone(Fields f, String field, long old) {
        JsonNode v = f.raw(field);
        if (v == null) return old;
        return v.isNull() ? 0 : f.timeLimitSec(field, old);
    }

    private void memberToken(Context ctx) {
        Requests.require(ctx, "create tokens", Role.ADMIN);
        String tenant = ctx.pathParam("name");
        Fields f = hasBody(ctx) ? Fields.of(Requests.json(ctx), "", MEMBER_TOKEN_FIELDS) : null;
        String label = f == null ? "" : f.string("label", "", 200);
        String unixUser = f == null ? null : f.string("unixUser", null, 64);
        if (unixUser != null) {
            UnixAccount.checkName("unixUser", unixUser);
            UnixAccount.checkNotRoot("unixUser", unixUser, allowRootJobs);
        }
        if (!await(pool.tenantExists(tenant))) throw ServiceException.notFound("tenant '" + Requests.clip(tenant) + "'");
        issue(ctx, Tokens.mint(Role.MEMBER, tenant, label, unixUser, clock.now()));
    }

    private void agentToken(Context ctx) {
        Requests.require(ctx, "create agent tokens", Role.ADMIN);
        issue(ctx, Tokens.mint(Role.AGENT, null, label(ctx), clock.now()));
    }

    private static String label(Context ctx) {
        return hasBody(ctx) ? Fields.of(Requests.json(ctx), "", TOKEN_FIELDS).string("label", "", 200) : "";
    }

    /** Token requests may come without a body (all their fields are optional). */
    private static boolean hasBody(Context ctx) {
        return !(ctx.contentLength() == 0 || (Requests.contentType(ctx) == null && ctx.contentLength() <= 0));
    }

    /** Stores the token's hash, then shows the secret once. */
    private void issue(Context ctx, Tokens.Minted m) {
        await(writer.submit(new Write.PutToken(m.row())));
        tokens.add(m.row());
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("token", m.token());
        out.put("id", m.row().id());
        out.put("role", m.row().role());
        out.put("tenant", m.row().tenant());
        if (m.row().unixUser() != null) out.put("unixUser", m.row().unixUser());
        Json.send(ctx, 201, out);
    }

    /** The whole configuration tree in force, tenants included (docs/configuration.md). */
    private void getConfig(Context ctx) {
        Requests.require(ctx, "read the configuration", Role.ADMIN, Role.MEMBER);
        SchedulerSettings s = await(pool.settings());
        Json.send(ctx, 200, s.toTree(await(pool.tenants())));
    }

    /** The tree, whole or partial (or the older flat fields), checked in full, then applied and stored ({@link ConfigChange}). */
    private void putConfig(Context ctx) {
        Requests.require(ctx, "change the configuration", Role.ADMIN);
        JsonNode body = Requests.json(ctx);
        Map<String, TenantRow> tenants = ConfigChange.byName(await(pool.tenants()));
        ConfigChange change = ConfigChange.fromBody(body, "request body", await(pool.settings()), tenants, true);
        SchedulerSettings applied = await(change.applyTo(pool, tenants));
        Json.send(ctx, 200, applied.toTree(await(pool.tenants())));
    }

}
