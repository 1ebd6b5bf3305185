package io.gpupool.store;

/**
 * An advance reservation as stored (V11): the tenant's GPUs over [{@code startMs}, {@code endMs}).
 *
 * @param gpus      the reserved GPUs as JSON, {@code [{"node": NAME, "gpu": INDEX}, ...]}
 * @param model     the GPU model asked for, or null when nodes were
 * @param nodes     the nodes asked for as a JSON array (empty when a count of a model was)
 * @param createdBy who made it ("admin token ID")
 */
public record ReservationRow(String name, String tenant, long startMs, long endMs, String gpus, String model, String nodes, long createdMs,
                             String createdBy) {}
