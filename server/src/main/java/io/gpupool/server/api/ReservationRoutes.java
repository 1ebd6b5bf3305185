package io.gpupool.server.api;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpupool.engine.reservation.ReservationRequest;
import io.gpupool.model.GpuCatalog;
import io.gpupool.server.auth.Role;
import io.gpupool.server.core.Fields;
import io.gpupool.server.core.PoolService;
import io.gpupool.server.core.ServiceClock;
import io.gpupool.server.core.ServiceException;
import io.gpupool.server.core.Views;
import io.javalin.http.Context;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.gpupool.server.api.Requests.await;

/**
 * /api/v1/reservations: advance reservations (Slurm's {@code scontrol create reservation}). Admins make and delete them;
 * admins and members list them all (a member's jobs wait for other tenants' windows too, so the member sees them).
 */
final class ReservationRoutes {
    static final Set<String> FIELDS = Set.of("name", "tenant", "gpus", "model", "nodes", "start", "end", "ignoreRunningJobs");
    private static final Pattern RELATIVE = Pattern.compile("\\+(\\d{1,9})([smhd])");
    private final PoolService pool;
    private final GpuCatalog catalog;
    private final ServiceClock clock;

    ReservationRoutes(PoolService pool, GpuCatalog catalog, ServiceClock clock) {
        this.pool = pool;
        this.catalog = catalog;
        this.clock = clock;
    }

    void register(RouteTable r) {
        r.get("/api/v1/reservations", this::list);
        r.post("/api/v1/reservations", this::create);
        r.get("/api/v1/reservations/{name}", this::get);
        r.delete("/api/v1/reservations/{name}", this::delete);
    }

    private void list(Context ctx) {
        Requests.require(ctx, "list reservations", Role.ADMIN, Role.MEMBER);
        Json.send(ctx, 200, Map.of("reservations", await(pool.reservations()).stream().map(ReservationRoutes::json).toList()));
    }

    private void get(Context ctx) {
        Requests.require(ctx, "read reservations", Role.ADMIN, Role.MEMBER);
        String name = ctx.pathParam("name");
        Views.Reservation r = await(pool.reservations()).stream().filter(x -> x.name().equals(name)).findFirst()
                .orElseThrow(() -> ServiceException.notFound("reservation '" + Requests.clip(name) + "'"));
        Json.send(ctx, 200, json(r));
    }

    private void create(Context ctx) {
        var by = Requests.require(ctx, "create reservations", Role.ADMIN);
        Fields f = Fields.of(Requests.json(ctx), "", FIELDS);
        long now = clock.now();
        if (!f.has("tenant")) throw ServiceException.invalid("tenant", "is required");
        String tenant = f.name("tenant", null);
        if (!await(pool.tenantExists(tenant))) throw ServiceException.invalid("tenant", "unknown tenant '" + tenant + "'");
        if (!f.has("start")) throw ServiceException.invalid("start", "is required: \"now\", \"+2h\", an ISO-8601 instant or epoch milliseconds");
        if (!f.has("end")) throw ServiceException.invalid("end", "is required: \"+4h\", an ISO-8601 instant or epoch milliseconds");
        long start = when(f, "start", now);
        long end = when(f, "end", now);
        List<String> nodes = new ArrayList<>();
        if (f.has("nodes")) {
            JsonNode arr = f.array("nodes", 1024);
            for (int i = 0; i < arr.size(); i++) {
                if (!arr.get(i).isTextual()) throw ServiceException.malformed("nodes[" + i + "]", "must be a string");
                nodes.add(arr.get(i).textValue());
            }
            if (nodes.isEmpty()) throw ServiceException.invalid("nodes", "must name at least one node");
        }
        int gpus = (int) f.integer("gpus", 0, 1, 1_000_000);
        String model = null;
        if (f.has("model")) {
            String asked = f.string("model", null, 64);
            model = catalog.find(asked).orElseThrow(() -> ServiceException.invalid("model",
                    "unknown GPU model '" + Requests.clip(asked) + "'; see `gpupool catalog` for the names")).id();
        }
        if (nodes.isEmpty() && gpus == 0) throw ServiceException.invalid("gpus", "give a number of GPUs of a model, or nodes");
        if (!nodes.isEmpty() && (gpus > 0 || model != null)) {
            throw ServiceException.invalid("nodes", "give either nodes or a number of GPUs of a model, not both");
        }
        String name = f.name("name", null);
        if (name == null) name = freeName(tenant);
        ReservationRequest q = new ReservationRequest(name, tenant, start, end, gpus, model, nodes, f.bool("ignoreRunningJobs", false));
        Views.MadeReservation made = await(pool.reserve(q, by));
        Map<String, Object> out = json(made.reservation());
        out.put("notHonouredUntilEnd", made.notHonouredUntilEnd());
        Json.send(ctx, 201, out);
    }

    private void delete(Context ctx) {
        Requests.require(ctx, "delete reservations", Role.ADMIN);
        String name = ctx.pathParam("name");
        if (!await(pool.deleteReservation(name))) throw ServiceException.notFound("reservation '" + Requests.clip(name) + "'");
        Json.send(ctx, 200, Map.of("deleted", name));
    }

    /** The first of TENANT-1, TENANT-2, ... that no reservation has. */
    private String freeName(String tenant) {
        Set<String> used = new java.util.HashSet<>();
        for (Views.Reservation r : await(pool.reservations())) used.add(r.name());
        String base = tenant.length() > 56 ? tenant.substring(0, 56) : tenant;
        for (int i = 1; ; i++) if (!used.contains(base + "-" + i)) return base + "-" + i;
    }

    /** A time: epoch milliseconds, an ISO-8601 instant, "now", or "+N" seconds, minutes, hours or days from now ("+2h"). */
    static long when(Fields f, String field, long now) {
        JsonNode v = f.raw(field);
        if (v.isIntegralNumber()) return f.integer(field, 0, 0, 253_402_300_799_999L);
        if (!v.isTextual()) throw ServiceException.malformed(field, "must be a string (\"now\", \"+2h\", an ISO-8601 instant) or epoch milliseconds");
        String s = f.string(field, null, 64).trim();
        if (s.equals("now")) return now;
        Matcher m = RELATIVE.matcher(s);
        if (m.matches()) {
            long unit = switch (m.group(2)) {
                case "s" -> 1000L;
                case "m" -> 60_000L;
                case "h" -> 3_600_000L;
                default -> 86_400_000L;
            };
            return now + Long.parseLong(m.group(1)) * unit;
        }
        try {
            return Instant.parse(s).toEpochMilli();
        } catch (DateTimeParseException | ArithmeticException e) {
            throw ServiceException.invalid(field, "must be \"now\", \"+N\" with s, m, h or d (\"+2h\"), an ISO-8601 instant "
                    + "(2026-12-24T09:00:00Z) or epoch milliseconds, got '" + Requests.clip(s) + "'");
        }
    }

    static Map<String, Object> json(Views.Reservation r) {
        Map<String, Object> o = new LinkedHashMap<>();
        o.put("name", r.name());
        o.put("tenant", r.tenant());
        o.put("start", Instant.ofEpochMilli(r.startMs()).toString());
        o.put("end", Instant.ofEpochMilli(r.endMs()).toString());
        o.put("startMs", r.startMs());
        o.put("endMs", r.endMs());
        o.put("gpus", r.gpus());
        o.put("model", r.model());
        o.put("nodes", r.nodes());
        o.put("gpuList", r.gpuList());
        o.put("createdMs", r.createdMs());
        o.put("createdBy", r.createdBy());
        return o;
    }
}
