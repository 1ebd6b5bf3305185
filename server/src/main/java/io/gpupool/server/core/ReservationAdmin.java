package io.gpupool.server.core;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.gpupool.engine.reservation.Reservation;
import io.gpupool.engine.reservation.ReservationBook;
import io.gpupool.engine.reservation.ReservationRequest;
import io.gpupool.model.SpecException;
import io.gpupool.server.auth.Principal;
import io.gpupool.store.ReservationRow;
import io.gpupool.store.Write;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Advance reservations in the service: made and deleted by admins, held by the engine ({@link ReservationBook}: what is
 * refused, who may use the GPUs when), stored (V11) so they outlive a restart, and deleted from the store when their
 * window ends. Loop thread only.
 */
final class ReservationAdmin {
    private static final Logger LOG = LoggerFactory.getLogger(ReservationAdmin.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final PoolState pool;
    /** Who made each reservation and when, by name (the engine holds the rest). */
    private final Map<String, ReservationRow> rows = new LinkedHashMap<>();

    ReservationAdmin(PoolState pool) {
        this.pool = pool;
    }

    /** After a restart: the stored reservations go back to the engine; those whose window ended meanwhile are deleted. */
    void restore(List<ReservationRow> stored, long now) {
        for (ReservationRow row : stored) {
            if (row.endMs() <= now) {
                pool.writes.add(new Write.DeleteReservation(row.name()));
                continue;
            }
            Reservation r = fromRow(row);
            int held = pool.engine.restoreReservation(r);
            if (held < r.gpus().size()) {
                LOG.warn("reservation {}: {} of its {} GPUs are no longer in the pool", r.name(), r.gpus().size() - held, r.gpus().size());
            }
            rows.put(r.name(), row);
        }
    }

    /** Makes a reservation (admin); refused with 422 naming the field when it cannot be honoured. */
    CompletableFuture<Views.MadeReservation> create(ReservationRequest q, Principal by) {
        pool.writes.requireStore();
        long now = pool.clock.now();
        ReservationBook.Planned p;
        try {
            p = pool.engine.reserve(q, now);
        } catch (SpecException e) {
            throw ServiceException.invalid(e.field(), e.rule());
        }
        Reservation r = p.reservation();
        ReservationRow row = new ReservationRow(r.name(), r.tenant(), r.startMs(), r.endMs(), gpusJson(r), r.model(), nodesJson(r), now,
                by.role().wire() + " token " + by.tokenId());
        rows.put(r.name(), row);
        pool.writes.add(new Write.PutReservation(row));
        pool.roundDue = true;
        Views.Reservation view = view(r);
        return pool.writes.commitOfThisIteration().thenApply(v -> new Views.MadeReservation(view, p.runningJobs()));
    }

    /** Deletes a reservation (admin); false when there is none of that name. Jobs running in it keep running. */
    CompletableFuture<Boolean> delete(String name) {
        pool.writes.requireStore();
        if (!pool.engine.cancelReservation(name)) return CompletableFuture.completedFuture(false);
        rows.remove(name);
        pool.writes.add(new Write.DeleteReservation(name));
        pool.roundDue = true;
        return pool.writes.commitOfThisIteration().thenApply(v -> true);
    }

    /** Every reservation, in the order they were made (everyone sees them all: they decide when jobs can start). */
    List<Views.Reservation> list() {
        List<Views.Reservation> out = new ArrayList<>();
        for (Reservation r : pool.engine.reservations()) out.add(view(r));
        return out;
    }

    /** Deletes the reservations whose window has ended (after each round). */
    void expire(long now) {
        for (Reservation r : pool.engine.expireReservations(now)) {
            rows.remove(r.name());
            pool.writes.add(new Write.DeleteReservation(r.name()));
        }
    }

    private Views.Reservation view(Reservation r) {
        ReservationRow row = rows.get(r.name());
        return new Views.Reservation(r.name(), r.tenant(), r.startMs(), r.endMs(), r.gpus().size(), r.model(), r.nodes(),
                r.gpus().stream().map(Reservation.Gpu::toString).toList(), row != null ? row.createdMs() : 0,
                row != null ? row.createdBy() : null);
    }

    private static String gpusJson(Reservation r) {
        ArrayNode a = JSON.createArrayNode();
        for (Reservation.Gpu g : r.gpus()) a.addObject().put("node", g.node()).put("gpu", g.index());
        return a.toString();
    }

    private static String nodesJson(Reservation r) {
        ArrayNode a = JSON.createArrayNode();
        r.nodes().forEach(a::add);
        return a.toString();
    }

    static Reservation fromRow(ReservationRow row) {
        try {
            List<Reservation.Gpu> gpus = new ArrayList<>();
            for (JsonNode g : JSON.readTree(row.gpus())) gpus.add(new Reservation.Gpu(g.path("node").asText(), g.path("gpu").asInt()));
            List<String> nodes = new ArrayList<>();
            for (JsonNode n : JSON.readTree(row.nodes())) nodes.add(n.asText());
            return new Reservation(row.name(), row.tenant(), row.startMs(), row.endMs(), gpus, row.model(), nodes);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("stored reservation " + row.name() + " is not JSON: " + e.getOriginalMessage());
        }
    }
}
