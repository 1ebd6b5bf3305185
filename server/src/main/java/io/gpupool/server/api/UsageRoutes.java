package io.gpupool.server.api;

import io.gpupool.server.auth.Principal;
import io.gpupool.server.auth.Role;
import io.gpupool.server.core.ServiceClock;
import io.gpupool.server.core.ServiceException;
import io.gpupool.server.usage.UsageReport;
import io.gpupool.server.usage.UsageWindow;
import io.gpupool.store.UsageStore;
import io.javalin.http.Context;

/**
 * GET /api/v1/usage: GPU-hours allocated and used, GPU-memory-hours, energy, jobs by end state and waits over a
 * window, grouped (docs/contracts.md, "Usage"). A member's report covers its own tenant; asking for another is 403.
 */
final class UsageRoutes {
    private final UsageStore usage;
    private final ServiceClock clock;

    UsageRoutes(UsageStore usage, ServiceClock clock) {
        this.usage = usage;
        this.clock = clock;
    }

    void register(RouteTable r) {
        r.get("/api/v1/usage", this::report);
    }

    private void report(Context ctx) {
        Principal p = Requests.require(ctx, "read usage", Role.ADMIN, Role.MEMBER);
        String tenant = visibleTenant(p, ctx.queryParam("tenant"), "usage");
        long now = clock.now();
        UsageWindow w = UsageWindow.parse(ctx.queryParam("since"), ctx.queryParam("until"), now);
        UsageReport.By by = UsageReport.By.parse(ctx.queryParam("by"));
        Json.send(ctx, 200, UsageReport.build(usage, w, by, tenant, now));
    }

    /**
     * The tenant a usage or history query covers: a member's own (naming another is 403), an admin's choice or (null)
     * all.
     */
    static String visibleTenant(Principal p, String tenant, String what) {
        if (tenant != null && tenant.isEmpty()) tenant = null;
        if (p.role() == Role.MEMBER) {
            if (tenant != null && !tenant.equals(p.tenant())) {
                throw ServiceException.forbidden("query 'tenant': a member token reads only its own tenant's " + what + " ('" + p.tenant() + "')");
            }
            return p.tenant();
        }
        if (tenant != null && tenant.length() > 64) throw ServiceException.malformed("tenant", "must be at most 64 characters");
        return tenant;
    }
}
