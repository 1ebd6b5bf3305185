package io.gpupool.server.api;

import io.gpupool.model.GpuCatalog;
import io.gpupool.server.auth.Principal;
import io.gpupool.server.auth.Role;
import io.gpupool.server.core.Dependency;
import io.gpupool.server.core.Fields;
import io.gpupool.server.core.JobEdits;
import io.gpupool.server.core.JobRequest;
import io.gpupool.server.core.PoolService;
import io.gpupool.server.core.ServiceException;
import io.gpupool.store.JobRow;
import io.gpupool.store.Store;
import io.javalin.http.Context;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

import static io.gpupool.server.api.Requests.await;

/**
 * /api/v1/jobs/{id}/hold, /release, /requeue and PATCH /api/v1/jobs/{id}: a member on its tenant's jobs, an admin on
 * any. 404 for a job the caller cannot see, 409 for one in the wrong state (ended, running, not held).
 */
final class JobEditRoutes {
    static final Set<String> UPDATE_FIELDS = Set.of("priority", "gpuTypes", Dependency.FIELD, "killOnInvalidDep", "timeLimit");
    private final PoolService pool;
    private final Store store;
    private final GpuCatalog catalog;

    JobEditRoutes(PoolService pool, Store store, GpuCatalog catalog) {
        this.pool = pool;
        this.store = store;
        this.catalog = catalog;
    }

    void register(RouteTable r) {
        r.post("/api/v1/jobs/{id}/hold", ctx -> edit(ctx, "hold jobs", pool::hold, JobEdits.ArrayEdit.HOLD));
        r.post("/api/v1/jobs/{id}/release", ctx -> edit(ctx, "release jobs", pool::release, JobEdits.ArrayEdit.RELEASE));
        r.post("/api/v1/jobs/{id}/requeue", ctx -> edit(ctx, "requeue jobs", pool::requeue, null));
        r.patch("/api/v1/jobs/{id}", this::update);
    }

    private interface Edit {
        CompletableFuture<JobRow> apply(String jobId, Principal by);
    }

    private void edit(Context ctx, String action, Edit edit, JobEdits.ArrayEdit onArray) {
        Principal p = Requests.require(ctx, action, Role.ADMIN, Role.MEMBER);
        String id = ctx.pathParam("id");
        if (onArray != null && arrayEdited(ctx, id, onArray, null, p)) return;
        JobRow row = id.length() <= 32 ? await(edit.apply(id, p)) : null;
        if (row == null) throw notActive(id, p);
        Json.send(ctx, 200, JobJson.of(row, await(pool.live(row.id()))));
    }

    /**
     * An array's id names all its tasks: the edit applies to every queued one (held ones, for a release); answers
     * {@code {"array", "tasks"}} with how many changed. False when the id is no array with active tasks the caller sees.
     */
    private boolean arrayEdited(Context ctx, String id, JobEdits.ArrayEdit edit, JobEdits.Update u, Principal p) {
        if (id.length() > 32 || id.contains("_")) return false;
        int n = await(pool.editArray(id, edit, u, p));
        if (n < 0) return false;
        Json.send(ctx, 200, Map.of("array", id, "tasks", n));
        return true;
    }

    private void update(Context ctx) {
        Principal p = Requests.require(ctx, "update jobs", Role.ADMIN, Role.MEMBER);
        String id = ctx.pathParam("id");
        Fields f = Fields.of(Requests.json(ctx), "", UPDATE_FIELDS);
        Integer priority = f.has("priority") ? (int) f.integer("priority", 0, -10_000, 10_000) : null;
        List<String> types = f.has("gpuTypes") ? JobRequest.gpuTypes(f, catalog) : null;
        Dependency dependency = null;
        Map<String, Dependency.Target> known = Map.of();
        boolean kill = f.bool("killOnInvalidDep", true);
        if (f.has(Dependency.FIELD)) {
            String text = f.string(Dependency.FIELD, "", 4096);
            dependency = text.isEmpty() ? new Dependency(List.of(), false, kill) : Dependency.parse(text, kill);
            known = DependencyTargets.resolve(dependency, p, store);
        } else if (f.has("killOnInvalidDep")) {
            throw ServiceException.invalid("killOnInvalidDep", "applies only with a dependency");
        }
        // a new time limit (the tenant's maximum holds), or null: none of its own (the tenant's default, as at submission)
        Long timeLimit = f.raw("timeLimit") == null ? null : f.raw("timeLimit").isNull() ? 0L : f.timeLimitSec("timeLimit", 0);
        if (priority == null && types == null && dependency == null && timeLimit == null) {
            throw ServiceException.invalid("body", "names nothing to change (priority, gpuTypes, timeLimit, dependency)");
        }
        JobEdits.Update u = new JobEdits.Update(priority, types, dependency, known, timeLimit);
        if (arrayEdited(ctx, id, JobEdits.ArrayEdit.UPDATE, u, p)) return;
        JobRow row = id.length() <= 32 ? await(pool.update(id, u, p)) : null;
        if (row == null) throw notActive(id, p);
        Json.send(ctx, 200, JobJson.of(row, await(pool.live(row.id()))));
    }

    /** 404 for a job the caller cannot see, 409 for one that ended. */
    private ServiceException notActive(String id, Principal p) {
        JobRow row = id.length() <= 32 ? store.job(id).orElse(null) : null;
        if (row == null || !p.sees(row.tenant())) return ServiceException.notFound("job '" + Requests.clip(id) + "'");
        return ServiceException.conflict("state", "job " + row.id() + " already ended (" + row.state() + ")");
    }
}
