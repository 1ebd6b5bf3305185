package io.gpupool.engine.reservation;

import java.util.List;

/**
 * What an admin asks to reserve: {@code gpus} GPUs of {@code model}, or every GPU of {@code nodes}, for the tenant over
 * [{@code startMs}, {@code endMs}). {@link ReservationBook#plan} checks it and chooses the GPUs.
 *
 * @param gpus              how many GPUs of {@code model} (0 when {@code nodes} are given)
 * @param model             a GPU model id as the pool's nodes have it (null when {@code nodes} are given)
 * @param nodes             node names, all of whose GPUs are reserved (empty when a count of a model is asked for)
 * @param ignoreRunningJobs reserve even where running jobs of other tenants would still hold the GPUs when the window
 *                          starts (Slurm's IGNORE_JOBS): the reservation is then honoured on those GPUs only once they end
 */
public record ReservationRequest(String name, String tenant, long startMs, long endMs, int gpus, String model, List<String> nodes,
                                 boolean ignoreRunningJobs) {
    public ReservationRequest {
        nodes = nodes == null ? List.of() : List.copyOf(nodes);
    }

    /** {@code gpus} GPUs of a model. */
    public static ReservationRequest ofModel(String name, String tenant, long startMs, long endMs, int gpus, String model) {
        return new ReservationRequest(name, tenant, startMs, endMs, gpus, model, List.of(), false);
    }

    /** Every GPU of the nodes. */
    public static ReservationRequest ofNodes(String name, String tenant, long startMs, long endMs, List<String> nodes) {
        return new ReservationRequest(name, tenant, startMs, endMs, 0, null, nodes, false);
    }

    public ReservationRequest ignoringRunningJobs() {
        return new ReservationRequest(name, tenant, startMs, endMs, gpus, model, nodes, true);
    }
}
