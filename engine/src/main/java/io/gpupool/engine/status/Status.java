package io.gpupool.engine.status;

import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Why the engine refused something (a node for a replica, a placement, a submission, a start), as data:
 * how final it is ({@link Code}), which plugin refused, the {@link Resource} it is about with the amounts
 * where they apply, and for a failed placement how many nodes refused for each reason. {@link #message()}
 * is the one English rendering: wait reasons, API errors, Kubernetes events and logs all show it; drivers
 * decide from the fields, never from the text.
 *
 * <p>A value with a record's equality; the refusals a round makes but nobody reads (most of a replay's: a simulation
 * shows only its figures) render their message on first read ({@link #lazy}): the texts were 7-11% of the backfilling
 * policies' allocation.
 *
 * <p>Components: {@code plugin} a filter's name ({@code gpu-model}, {@code health}, {@code capacity}, {@code host}, or a
 * driver's), or one of the constants here ({@link #GPU_POLICY}, {@link #FEASIBILITY}, ...); {@code requested} what the
 * job asks for, in the resource's unit, {@link #UNKNOWN} where it does not apply; {@code free} what is free now (on
 * the node, for the tenant; for a placement, the most on any refusing node), {@link #UNKNOWN} where it does not
 * apply; {@code capacity} the most there could be (a node's, the largest node's, a tenant's limit), {@link #UNKNOWN}
 * where it does not apply; {@code nodes} for a failed placement, the nodes that refused, counted per reason (in the
 * message's order), empty otherwise; {@code message} the English rendering, as users read it.
 */
public final class Status {
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

    private final Code code;
    private final String plugin;
    private final Resource resource;
    private final long requested, free, capacity;
    private final List<NodeCount> nodes;
    private final Supplier<String> render;   // makes the message when it is first read; null when it was given
    private volatile String message;

    public Status(Code code, String plugin, Resource resource, long requested, long free, long capacity, List<NodeCount> nodes, String message) {
        this(code, plugin, resource, requested, free, capacity, nodes, null, Objects.requireNonNull(message));
    }

    private Status(Code code, String plugin, Resource resource, long requested, long free, long capacity, List<NodeCount> nodes,
                   Supplier<String> render, String message) {
        this.code = Objects.requireNonNull(code);
        this.plugin = Objects.requireNonNull(plugin);
        this.resource = Objects.requireNonNull(resource);
        this.requested = requested;
        this.free = free;
        this.capacity = capacity;
        this.nodes = List.copyOf(nodes);
        this.render = render;
        this.message = message;
    }

    /**
     * A status whose message is made when first read, by {@code render} (which must give the same text every time
     * and read nothing that changes: the status may be read on another thread).
     */
    public static Status lazy(Code code, String plugin, Resource resource, long requested, long free, long capacity,
                              List<NodeCount> nodes, Supplier<String> render) {
        return new Status(code, plugin, resource, requested, free, capacity, nodes, Objects.requireNonNull(render), null);
    }

    public Code code() { return code; }

    public String plugin() { return plugin; }

    public Resource resource() { return resource; }

    public long requested() { return requested; }

    public long free() { return free; }

    public long capacity() { return capacity; }

    public List<NodeCount> nodes() { return nodes; }

    /** The English rendering (made now if it was not yet: two threads may both make it, the same text). */
    public String message() {
        String m = message;
        if (m == null) message = m = render.get();
        return m;
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
        return lazy(Code.UNSCHEDULABLE, BACKFILL, cause.resource(), cause.requested(), cause.free(), cause.capacity(),
                cause.nodes(), () -> "cannot backfill without delaying " + reservedJob + ": " + cause.message());
    }

    /** This status with the given amounts. */
    public Status withAmounts(long requested, long free, long capacity) {
        return lazy(code, plugin, resource, requested, free, capacity, nodes, this::message);
    }

    /** This status told in a wider context: {@code context} comes before the message; the data stay. */
    public Status within(String context) {
        return within(() -> context);
    }

    /** {@link #within(String)} with the context made when the message is read. */
    public Status within(Supplier<String> context) {
        return lazy(code, plugin, resource, requested, free, capacity, nodes, () -> context.get() + message());
    }

    public boolean unresolvable() {
        return code == Code.UNRESOLVABLE;
    }

    @Override
    public boolean equals(Object o) {
        return o == this || o instanceof Status s && code == s.code && plugin.equals(s.plugin) && resource == s.resource
                && requested == s.requested && free == s.free && capacity == s.capacity && nodes.equals(s.nodes)
                && message().equals(s.message());
    }

    @Override
    public int hashCode() {
        return Objects.hash(code, plugin, resource, requested, free, capacity, nodes, message());
    }

    @Override
    public String toString() {
        return "Status[code=" + code + ", plugin=" + plugin + ", resource=" + resource + ", requested=" + requested + ", free=" + free
                + ", capacity=" + capacity + ", nodes=" + nodes + ", message=" + message() + "]";
    }
}
