package io.gpupool.engine.reservation;

import io.gpupool.engine.status.Status;

import java.util.List;
import java.util.Set;

/**
 * The GPUs advance reservations keep a job off now ({@link ReservationBook#fence}): {@code excluded} (other tenants'
 * windows, or windows the job would run into), or, for a job that runs in a reservation, {@code only} that
 * reservation's GPUs. Jobs with the same fence and shape fit or fail together, so the round's memos key on
 * {@link #shapeKey}; fences are shared while the reservations do not change, so their sets compare by identity.
 *
 * @param key       which reservations make this fence ("" for {@link #NONE})
 * @param only      null, or the only GPUs the job may take
 * @param keptOutOf the reservations whose GPUs are excluded (for the wait reason)
 * @param within    the reservation the job runs in ({@code only} holds its GPUs), or null
 */
public record Fence(String key, Set<Long> excluded, Set<Long> only, List<Reservation> keptOutOf, Reservation within) {
    /** No reservation keeps the job off any GPU. */
    public static final Fence NONE = new Fence("", Set.of(), null, List.of(), null);

    public boolean none() {
        return this == NONE;
    }

    /** The job's shape key for memos: jobs of one shape and one fence fit or fail together. */
    public String shapeKey(String shape) {
        return none() ? shape : shape + "#" + key;
    }

    /**
     * The refusal of a job that would fit were it not for the reservations it may not use; {@code cause} is the
     * placement's refusal with their GPUs left out (its resource, amounts and counts stay).
     */
    public Status keptOut(Status cause) {
        if (within != null && keptOutOf.isEmpty()) {
            return new Status(cause.code(), ReservationBook.PLUGIN, cause.resource(), cause.requested(), cause.free(), cause.capacity(),
                    cause.nodes(), "in its reservation " + within.name() + ": " + cause.message());
        }
        StringBuilder which = new StringBuilder();
        for (Reservation r : keptOutOf) {
            if (!which.isEmpty()) which.append(", ");
            which.append(r.describe());
        }
        return new Status(cause.code(), ReservationBook.PLUGIN, cause.resource(), cause.requested(), cause.free(), cause.capacity(),
                cause.nodes(), "GPUs it would fit on are reserved by " + which + " (before a window only jobs whose time limit ends "
                + "before it starts may use them, inside it only the tenant's jobs); " + cause.message());
    }
}
