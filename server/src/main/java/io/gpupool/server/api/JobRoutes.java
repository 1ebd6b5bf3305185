package io.gpupool.server.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gpupool.model.GpuCatalog;
import io.gpupool.server.auth.Principal;
import io.gpupool.server.auth.Role;
import io.gpupool.server.core.ArraySpec;
import io.gpupool.server.core.Dependency;
import io.gpupool.server.core.JobRequest;
import io.gpupool.server.core.StoredSpec;
import io.gpupool.server.core.PoolService;
import io.gpupool.server.core.ServiceException;
import io.gpupool.server.core.UnixAccount;
import io.gpupool.server.core.Views;
import io.gpupool.store.EventRow;
import io.gpupool.store.JobQuery;
import io.gpupool.store.JobRow;
import io.gpupool.store.AttemptRow;
import io.gpupool.store.OutputSlice;
import io.gpupool.store.Store;
import io.javalin.http.Context;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static io.gpupool.server.api.Requests.await;

/** /api/v1/jobs: submit, get, list, cancel, events, logs (members see only their tenant's jobs). */
final class JobRoutes {
    static final Set<String> STATES = Set.of("PENDING", "RUNNING", "SUCCEEDED", "FAILED", "CANCELLED", "TIMEOUT");
    private final PoolService pool;
    private final Store store;
    private final GpuCatalog catalog;
    private final boolean allowRootJobs;

    JobRoutes(PoolService pool, Store store, GpuCatalog catalog, boolean allowRootJobs) {
        this.pool = pool;
        this.store = store;
        this.catalog = catalog;
        this.allowRootJobs = allowRootJobs;
    }

    void register(RouteTable r) {
        r.post("/api/v1/jobs", this::submit);
        r.get("/api/v1/jobs", this::list);
        r.get("/api/v1/jobs/{id}", this::get);
        r.delete("/api/v1/jobs/{id}", this::cancel);
        r.get("/api/v1/jobs/{id}/events", this::events);
        r.get("/api/v1/jobs/{id}/tasks", this::tasks);
        r.get("/api/v1/jobs/{id}/logs", this::logs);
    }

    private void submit(Context ctx) {
        Principal p = Requests.require(ctx, "submit jobs", Role.ADMIN, Role.MEMBER);
        String key = idempotencyKey(ctx);
        JsonNode body = Requests.json(ctx);
        ArraySpec array = null;
        Dependency dependency = null;
        if (body instanceof ObjectNode o && (o.has("array") || o.has(Dependency.FIELD) || o.has("killOnInvalidDep"))) {
            ObjectNode rest = o.deepCopy();
            JsonNode a = rest.remove("array");
            if (a != null) {
                if (!a.isTextual()) throw ServiceException.malformed("array", "must be a string such as \"0-199%16\"");
                array = ArraySpec.parse(a.textValue());
            }
            JsonNode kill = rest.remove("killOnInvalidDep");
            if (kill != null && !kill.isBoolean()) throw ServiceException.malformed("killOnInvalidDep", "must be true or false");
            JsonNode d = rest.remove(Dependency.FIELD);
            if (d != null) {
                if (!d.isTextual()) throw ServiceException.malformed(Dependency.FIELD, "must be a string such as \"afterok:j7\"");
                dependency = Dependency.parse(d.textValue(), kill == null || kill.booleanValue());
            } else if (kill != null) {
                throw ServiceException.invalid("killOnInvalidDep", "applies only with a dependency");
            }
            body = rest;
        }
        JobRequest req = JobRequest.parse(body, catalog);
        String tenant;
        String account;
        if (p.role() == Role.MEMBER) {
            if (req.tenant() != null && !req.tenant().equals(p.tenant())) {
                throw ServiceException.forbidden("field 'tenant': a member token submits only for its own tenant '" + p.tenant() + "'");
            }
            tenant = p.tenant();
            account = memberAccount(p, req.runAs());
        } else {
            if (req.tenant() == null) throw ServiceException.invalid("tenant", "is required when an admin token submits");
            tenant = req.tenant();
            account = req.runAs();
        }
        if (account != null) UnixAccount.checkNotRoot("runAs", account, allowRootJobs);
        JobRequest full = req.withOwner(tenant, account);
        Map<String, Dependency.Target> known = dependency == null ? Map.of() : DependencyTargets.resolve(dependency, p, store);
        if (array != null) {
            submitArray(ctx, full, array, dependency, known, key);
            return;
        }
        Views.Submitted s = await(pool.submit(full, dependency, known, key));
        if (s.created()) {
            Json.send(ctx, 201, JobJson.of(s.row(), null));
            return;
        }
        JobRow existing = store.job(s.jobId()).orElseThrow(() -> new IllegalStateException("idempotent job " + s.jobId() + " is not stored"));
        if (existing.arrayId() != null || !StoredSpec.read(existing.spec(), catalog).request().toJson().equals(full.toJson())) {
            throw ServiceException.conflict("Idempotency-Key", "was already used for a different job (" + existing.id() + ")");
        }
        Json.send(ctx, 200, JobJson.of(existing, await(pool.live(existing.id()))));
    }

    private void submitArray(Context ctx, JobRequest full, ArraySpec array, Dependency dependency, Map<String, Dependency.Target> known, String key) {
        Views.Submitted s = await(pool.submitArray(full, array, dependency, known, key));
        JobRow first = s.created() ? s.row() : store.job(s.jobId()).orElseThrow(() -> new IllegalStateException("idempotent job " + s.jobId() + " is not stored"));
        String arrayId = first.arrayId();
        if (!s.created()) {
            StoredSpec stored = StoredSpec.read(first.spec(), catalog);
            if (arrayId == null || !stored.request().toJson().equals(full.toJson()) || stored.array().cap() != array.cap()
                    || store.arrayStates(arrayId).values().stream().mapToLong(Long::longValue).sum() != array.size()) {
                throw ServiceException.conflict("Idempotency-Key", "was already used for a different job (" + (arrayId != null ? arrayId : first.id()) + ")");
            }
        }
        Json.send(ctx, s.created() ? 201 : 200, ArrayJson.of(arrayId, first, store.arrayStates(arrayId)));
    }

    /** The array named by the path, if the caller may see it; null when the path names no array. */
    private ObjectNode visibleArray(String id, Principal p) {
        if (!id.matches("j[0-9]{1,18}")) return null;
        List<JobRow> first = store.arrayTasks(id, 0, 1);
        if (first.isEmpty() || !p.sees(first.getFirst().tenant())) return null;
        return ArrayJson.of(id, first.getFirst(), store.arrayStates(id));
    }

    /** A page of an array's tasks, in index order. */
    private void tasks(Context ctx) {
        Principal p = Requests.require(ctx, "read jobs", Role.ADMIN, Role.MEMBER);
        String id = ctx.pathParam("id");
        ObjectNode array = visibleArray(id, p);
        if (array == null) throw ServiceException.notFound("job array '" + Requests.clip(id) + "'");
        int limit = (int) Requests.queryLong(ctx, "limit", 100, 1, 1000);
        long cursor = Requests.queryLong(ctx, "cursor", 0, 0, Long.MAX_VALUE);
        List<JobRow> rows = store.arrayTasks(id, cursor, limit);
        ArrayNode tasks = array.putArray("taskPage");
        for (JobRow r : rows) tasks.add(JobJson.of(r, null));
        array.put("nextCursor", rows.size() == limit ? String.valueOf(rows.getLast().seq()) : null);
        Json.send(ctx, 200, array);
    }

    /** A member's jobs run as its token's account, whatever the request says; only an admin chooses another. */
    private static String memberAccount(Principal p, String asked) {
        if (asked != null && !asked.equals(p.unixUser())) {
            throw ServiceException.forbidden("field 'runAs': " + (p.unixUser() == null
                    ? "this member token is not bound to a Unix account; only an admin token chooses one"
                    : "a member token bound to '" + p.unixUser() + "' runs jobs only as '" + p.unixUser() + "'"));
        }
        return p.unixUser();
    }

    private static String idempotencyKey(Context ctx) {
        String key = ctx.header("Idempotency-Key");
        if (key == null) return null;
        if (key.isEmpty() || key.length() > 200 || !key.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
            throw ServiceException.malformed("Idempotency-Key", "must be 1-200 printable ASCII characters without spaces");
        }
        return key;
    }

    /** The job if the caller may see it; 404 otherwise (another tenant's job does not exist for a member). */
    private JobRow visible(Context ctx, Principal p) {
        String id = ctx.pathParam("id");
        JobRow row = id.length() <= 32 ? store.job(id).orElse(null) : null;
        if (row == null || !p.sees(row.tenant())) throw ServiceException.notFound("job '" + Requests.clip(id) + "'");
        return row;
    }

    private void get(Context ctx) {
        Principal p = Requests.require(ctx, "read jobs", Role.ADMIN, Role.MEMBER);
        ObjectNode array = visibleArray(ctx.pathParam("id"), p);
        if (array != null) {
            Json.send(ctx, 200, array);
            return;
        }
        JobRow row = visible(ctx, p);
        Views.Live live = row.active() ? await(pool.live(row.id())) : null;
        Json.send(ctx, 200, JobJson.of(row, live).set("attempts", JobJson.attempts(store.attempts(row.id()))));
    }

    private void list(Context ctx) {
        Principal p = Requests.require(ctx, "read jobs", Role.ADMIN, Role.MEMBER);
        String tenant = ctx.queryParam("tenant");
        if (tenant != null && tenant.isEmpty()) tenant = null;
        if (p.role() == Role.MEMBER) {
            if (tenant != null && !tenant.equals(p.tenant())) {
                throw ServiceException.forbidden("query 'tenant': a member token lists only its own tenant '" + p.tenant() + "'");
            }
            tenant = p.tenant();
        }
        Set<String> states = new LinkedHashSet<>();
        String st = ctx.queryParam("state");
        if (st != null && !st.isEmpty()) {
            for (String s : st.split(",")) {
                String u = s.trim().toUpperCase(java.util.Locale.ROOT);
                if (!STATES.contains(u)) throw ServiceException.invalid("state", "unknown state '" + Requests.clip(s) + "'; one of " + String.join(", ", STATES.stream().sorted().toList()));
                states.add(u);
            }
        }
        int limit = (int) Requests.queryLong(ctx, "limit", 100, 1, 1000);
        long cursor = Requests.queryLong(ctx, "cursor", 0, 0, Long.MAX_VALUE);
        Long since = ctx.queryParam("since") == null ? null : Requests.queryLong(ctx, "since", 0, 0, Long.MAX_VALUE);
        Long until = ctx.queryParam("until") == null ? null : Requests.queryLong(ctx, "until", 0, 0, Long.MAX_VALUE);
        List<JobRow> rows = store.jobs(new JobQuery(tenant, states, since, until, cursor, limit));
        ObjectNode out = Json.MAPPER.createObjectNode();
        ArrayNode jobs = out.putArray("jobs");
        for (JobRow r : rows) jobs.add(JobJson.of(r, null));
        out.put("nextCursor", rows.size() == limit ? String.valueOf(rows.getLast().seq()) : null);
        Json.send(ctx, 200, out);
    }

    private void cancel(Context ctx) {
        Principal p = Requests.require(ctx, "cancel jobs", Role.ADMIN, Role.MEMBER);
        String id = ctx.pathParam("id");
        ObjectNode array = visibleArray(id, p);
        if (array != null) {
            int n = await(pool.cancelArray(id, p));
            if (n < 0) throw ServiceException.conflict("state", "job array " + id + " already ended (" + array.path("state").asText() + ")");
            Json.send(ctx, 200, visibleArray(id, p).put("cancelled", n));
            return;
        }
        JobRow done = id.length() <= 32 ? await(pool.cancel(id, p)) : null;
        if (done == null) {
            JobRow row = visible(ctx, p);
            throw ServiceException.conflict("state", "job " + row.id() + " already ended (" + row.state() + ")");
        }
        Json.send(ctx, 200, JobJson.of(done, null));
    }

    private void events(Context ctx) {
        Principal p = Requests.require(ctx, "read jobs", Role.ADMIN, Role.MEMBER);
        JobRow row = visible(ctx, p);
        List<EventRow> events = store.events(row.id());
        List<Object> out = new ArrayList<>();
        for (EventRow e : events) out.add(java.util.Map.of("id", e.id(), "atMs", e.atMs(), "type", e.type(), "detail", e.detail() == null ? "" : e.detail()));
        Json.send(ctx, 200, java.util.Map.of("jobId", row.id(), "events", out));
    }

    /**
     * A job's output as its agent shipped it: one stream of one attempt on one node (by default stdout of the
     * latest attempt, on the node of its first replica), as text from a byte offset. {@code nextOffset} is where
     * to ask next; it never splits a UTF-8 character. {@code complete}: the attempt ended and all of it is here.
     */
    private void logs(Context ctx) {
        Principal p = Requests.require(ctx, "read jobs", Role.ADMIN, Role.MEMBER);
        JobRow row = visible(ctx, p);
        String stream = ctx.queryParam("stream") == null || ctx.queryParam("stream").isEmpty() ? "stdout" : ctx.queryParam("stream");
        if (!stream.equals("stdout") && !stream.equals("stderr")) throw ServiceException.invalid("stream", "must be stdout or stderr");
        int attempt = (int) Requests.queryLong(ctx, "attempt", row.attempt(), 0, Integer.MAX_VALUE);
        long offset = Requests.queryLong(ctx, "offset", 0, 0, Long.MAX_VALUE);
        int limit = (int) Requests.queryLong(ctx, "limit", 256 * 1024, 1, 4 * 1024 * 1024);
        List<AttemptRow> attempts = store.attempts(row.id());
        String node = ctx.queryParam("node");
        if (node == null || node.isEmpty()) node = firstReplicaNode(attempts, attempt);
        ObjectNode out = Json.MAPPER.createObjectNode();
        out.put("jobId", row.id());
        out.put("state", row.state());
        out.put("attempt", attempt);
        out.put("node", node);
        out.put("stream", stream);
        out.put("offset", offset);
        if (node == null || node.length() > 253) {
            out.put("nextOffset", offset).put("length", 0).put("complete", false).put("text", "");
        } else {
            OutputSlice slice = store.output(row.id(), attempt, node, stream, offset, limit);
            byte[] data = slice.data();
            long end = offset + data.length;
            int keep = end == slice.length() && slice.complete() ? data.length : Utf8.completePrefix(data);
            out.put("nextOffset", offset + keep);
            out.put("length", slice.length());
            out.put("complete", slice.complete() && offset + keep >= slice.length());
            out.put("text", new String(data, 0, keep, StandardCharsets.UTF_8));
        }
        ArrayNode list = out.putArray("attempts");
        for (AttemptRow a : attempts) list.addObject().put("attempt", a.attempt()).put("node", a.node()).put("state", a.state());
        Json.send(ctx, 200, out);
    }

    /** The node that ran replica 0 of the attempt (its output is the job's main log), else any of its nodes. */
    private static String firstReplicaNode(List<AttemptRow> attempts, int attempt) {
        String any = null;
        for (AttemptRow a : attempts) {
            if (a.attempt() != attempt) continue;
            if (any == null) any = a.node();
            if (a.grants().contains("\"replica\":0,")) return a.node();
        }
        return any;
    }
}
