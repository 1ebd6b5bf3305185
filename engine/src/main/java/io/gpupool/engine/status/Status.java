package io.gpupool.engine.status;

import java.util.List;
import java.util.Objects;

/**
 * Why the engine refused something (a node for a replica, a placement, a submission, a start), as data:
 * how final it is ({@link Code}), which plugin refused, the {@link Resource} it is about with the amounts
 * where they apply, and for a failed placement how many nodes refused for each reason. {@link #message()}
 * is the one English rendering: wait reasons, API errors, Kubernetes events and logs all show it; drivers
 * decide from the fields, never from the text.
 *
 * @param plugin    a filter's name ({@code gpu-model}, {@code health}, {@code capacity}, {@code host}, or a
 *                  driver's), or one of the constants here ({@link #GPU_POLICY}, {@link #FEASIBILITY}, ...)
 * @param requested what the job asks for, in the resource's unit; {@link #UNKNOWN} where it does not apply
 * @param free      what is free now (on the node, for the tenant; for a placement, the most on any refusing
 *                  node); {@link #UNKNOWN} where it does not apply
 * @param capacity  the most there could be (a node's, the largest node's, a tenant's limit); {@link #UNKNOWN}
 *                  where it does not apply
 * @param nodes     for a failed placement: the nodes that refused, counted per reason (in the message's order);
 *                  empty otherwise
 * @param message   the English rendering, as users read it
 */
public record Status(Code code, String plugin, Resource resource, long requested, long free, long capacity,
                     List<NodeCount> nodes, String message) {
    /** An amount that does not apply or is not known. */
    public static final long UNKNOWN = -1;

    /** Submit-time check: could the job ever run on this pool, were it empty. */
    public static final String FEASIBILITY = "feasibility";
    /** The tenant's hard GPU limit against what it holds now. */
    public static final String QUOTA = "quota";
    /** The queue policy's own admission rule. */
    public static final String ADMISSION = "admission";
    /** A driver holds the job ({@code Scheduler.hold}). */
    public static final String HOLD = "hold";
    /** The GPU-level policy found no set of GPUs on a node that passed the filters. */
    public static final String GPU_POLICY = "gpu-policy";
    /** EASY backfill: the job would delay the reserved job. */
    public static final String BACKFILL = "backfill";
    /** A placement given from outside (a batch optimizer's answer) does not fit the job's shape or the pool. */
    public static final String PLACEMENT = "placement";
    /** The submission itself (a job id already in use). */
    public static final String SUBMIT = "submit";
    /** Taking back a running job after a driver's restart. */
    public static final String RESTORE = "restore";

    public Status {
        Objects.requireNonNull(code);
        Objects.requireNonNull(plugin);
        Objects.requireNonNull(resource);
        Objects.requireNonNull(message);
        nodes = List.copyOf(nodes);
    }

    /** A refusal for now, about a resource, without amounts. */
    public static Status unschedulable(String plugin, Resource resource, String message) {
        return new Status(Code.UNSCHEDULABLE, plugin, resource, UNKNOWN, UNKNOWN, UNKNOWN, List.of(), message);
    }

    /** A refusal that waiting cannot lift (on this node, or on this pool). */
    public static Status unresolvable(String plugin, Resource resource, String message) {
        return new Status(Code.UNRESOLVABLE, plugin, resource, UNKNOWN, UNKNOWN, UNKNOWN, List.of(), message);
    }

    /** An inconsistent request or answer. */
    public static Status error(String plugin, String message) {
        return new Status(Code.ERROR, plugin, Resource.NONE, UNKNOWN, UNKNOWN, UNKNOWN, List.of(), message);
    }

    /** Not enough of a resource now: {@code requested} against {@code free} of {@code capacity}. */
    public static Status insufficient(String plugin, Resource resource, long requested, long free, long capacity, String message) {
        return new Status(Code.UNSCHEDULABLE, plugin, resource, requested, free, capacity, List.of(), message);
    }

    /** The job is held by its driver ({@code reason} as the driver gave it). */
    public static Status held(String reason) {
        return unschedulable(HOLD, Resource.NONE, "held: " + reason);
    }

    /** The queue policy's admission rule refused the job now ({@code why} as the policy said it); null when it admits. */
    public static Status admission(String why) {
        return why == null ? null : unschedulable(ADMISSION, Resource.NONE, why);
    }

    /**
     * EASY backfill: the job fits only on GPUs reserved for {@code reservedJob}, and would not end before they are
     * needed; {@code cause} is the placement's refusal with those GPUs left out (its resource, amounts and counts stay).
     */
    public static Status backfill(String reservedJob, Status cause) {
        return new Status(Code.UNSCHEDULABLE, BACKFILL, cause.resource(), cause.requested(), cause.free(), cause.capacity(),
                cause.nodes(), "cannot backfill without delaying " + reservedJob + ": " + cause.message());
    }

    /** This status with the given amounts. */
    public Status withAmounts(long requested, long free, long capacity) {
        return new Status(code, plugin, resource, requested, free, capacity, nodes, message);
    }

    /** This status told in a wider context: {@code context} comes before the message; the data stay. */
    public Status within(String context) {
        return new Status(code, plugin, resource, requested, free, capacity, nodes, context + message);
    }

    public boolean unresolvable() {
        return code == Code.UNRESOLVABLE;
    }
}
