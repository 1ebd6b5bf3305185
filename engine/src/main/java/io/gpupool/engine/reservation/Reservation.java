package io.gpupool.engine.reservation;

import java.util.List;
import java.util.Objects;

/**
 * An advance reservation (Slurm's {@code scontrol create reservation}): these GPUs belong to the tenant over the window
 * [{@code startMs}, {@code endMs}). Inside the window only the tenant's jobs may use them; before it, any job may, if its
 * time limit ends before the window starts. The GPUs are named by node name and index, so a reservation outlives a
 * driver's restart (node ids may change, names do not).
 *
 * @param model the GPU model asked for ({@code gpus} of it), or null when whole nodes were asked for
 * @param nodes the nodes asked for (all their GPUs), empty when a count of a model was
 */
public record Reservation(String name, String tenant, long startMs, long endMs, List<Gpu> gpus, String model, List<String> nodes) {
    /** One reserved GPU: its node's name and its index there. */
    public record Gpu(String node, int index) {
        public Gpu {
            Objects.requireNonNull(node);
        }

        @Override
        public String toString() {
            return node + ":" + index;
        }
    }

    public Reservation {
        Objects.requireNonNull(name);
        Objects.requireNonNull(tenant);
        gpus = List.copyOf(gpus);
        nodes = List.copyOf(nodes);
        if (endMs <= startMs) throw new IllegalArgumentException("reservation " + name + ": end " + endMs + " is not after start " + startMs);
    }

    /** Whether the window has begun and not ended at {@code nowMs}. */
    public boolean activeAt(long nowMs) {
        return startMs <= nowMs && nowMs < endMs;
    }

    /** The reservation as users read it: "r1 (tenant vision, 16 GPUs, t=100.0s..t=200.0s)". */
    public String describe() {
        return name + " (tenant " + tenant + ", " + gpus.size() + " GPUs, " + ReservationTimes.render(startMs) + " to "
                + ReservationTimes.render(endMs) + ")";
    }
}
