package io.gpupool.engine.reservation;

import io.gpupool.engine.JobState;
import io.gpupool.engine.placement.CycleState;
import io.gpupool.engine.state.ClusterState;
import io.gpupool.engine.state.NodeState;
import io.gpupool.engine.status.Resource;
import io.gpupool.engine.status.Status;
import io.gpupool.model.JobSpec;
import io.gpupool.model.SpecException;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;

/**
 * The pool's advance reservations and their two rules, which every round applies to every placement (the scheduler
 * asks for each job's {@link #fence}):
 * <ul>
 *   <li>inside a reservation's window only its tenant's jobs may use its GPUs;</li>
 *   <li>before the window any job may, if its time limit ends before the window starts (the limit is the one bound
 *       the node's agent enforces); a job without a time limit may not take reserved GPUs until the window is over.</li>
 * </ul>
 * A job that names a reservation (Slurm's {@code --reservation}) runs only on its GPUs and only inside its window.
 * {@link #plan} refuses a reservation that cannot be honoured, naming the field and the reason, and chooses its GPUs.
 */
public final class ReservationBook {
    /** The plugin name of the refusals reservations cause. */
    public static final String PLUGIN = "reservation";

    private record Held(Reservation reservation, long id, Set<Long> gpus) {}

    /** A planned reservation, and the running jobs of other tenants still on its GPUs when its window starts (only when ignored). */
    public record Planned(Reservation reservation, List<String> runningJobs) {}

    private final Map<String, Held> byName = new LinkedHashMap<>();
    private final Map<Long, Held> byId = new HashMap<>();
    private final Map<String, Fence> fences = new HashMap<>();   // by key, while the reservations are unchanged
    private long nextId;

    public boolean isEmpty() {
        return byName.isEmpty();
    }

    /** The reservations in the order they were made. */
    public List<Reservation> all() {
        return byName.values().stream().map(Held::reservation).toList();
    }

    public Reservation get(String name) {
        Held h = byName.get(name);
        return h == null ? null : h.reservation;
    }

    /**
     * Checks a request against the pool and the reservations already made, and chooses its GPUs; changes nothing.
     * A start before {@code nowMs} means now. Refusals are {@link SpecException}s naming the request's field.
     *
     * @param tenants the tenants the pool knows, or null when it keeps no list (the simulator)
     */
    public Planned plan(ReservationRequest q, ClusterState cluster, Collection<JobState> running, Set<String> tenants, long nowMs) {
        String where = "reservation " + q.name();
        if (q.name() == null || q.name().isBlank()) throw new SpecException("reservation", "name", "must not be empty");
        if (byName.containsKey(q.name())) throw new SpecException(where, "name", "a reservation named '" + q.name() + "' already exists");
        if (q.tenant() == null || q.tenant().isBlank()) throw new SpecException(where, "tenant", "is required");
        if (tenants != null && !tenants.contains(q.tenant())) throw new SpecException(where, "tenant", "unknown tenant '" + q.tenant() + "'");
        if (q.endMs() <= q.startMs()) {
            throw new SpecException(where, "end", "must be after the start (" + ReservationTimes.render(q.startMs()) + "), got "
                    + ReservationTimes.render(q.endMs()));
        }
        if (q.endMs() <= nowMs) {
            throw new SpecException(where, "end", "the window is in the past: it ends at " + ReservationTimes.render(q.endMs())
                    + ", now is " + ReservationTimes.render(nowMs));
        }
        long start = Math.max(q.startMs(), nowMs);
        boolean byNodes = !q.nodes().isEmpty();
        if (byNodes && (q.gpus() > 0 || q.model() != null)) {
            throw new SpecException(where, "nodes", "give either nodes or a number of GPUs of a model, not both");
        }
        // the GPUs reservations with an overlapping window hold
        Map<Long, Held> taken = new HashMap<>();
        for (Held h : byName.values()) {
            if (h.reservation.startMs() < q.endMs() && start < h.reservation.endMs()) for (long g : h.gpus) taken.put(g, h);
        }
        // the GPUs other tenants' running jobs would still hold when the window starts (the tenant's own may run on in it)
        Map<Long, JobState> busy = new HashMap<>();
        for (JobState j : running) {
            if (j.spec().tenant().equals(q.tenant())) continue;
            OptionalLong limit = j.spec().timeLimitMs();
            if (limit.isPresent() && j.runStartMs() + limit.getAsLong() <= start) continue;
            for (long key : j.heldGpus()) busy.put(key, j);
        }
        List<Long> chosen = byNodes ? nodesGpus(q, cluster, taken, where) : modelGpus(q, cluster, taken, busy, where);
        Set<JobState> conflicts = new LinkedHashSet<>();
        for (long g : chosen) if (busy.containsKey(g)) conflicts.add(busy.get(g));
        if (!conflicts.isEmpty() && !q.ignoreRunningJobs()) {
            throw new SpecException(where, "start", describe(conflicts, start) + " would still hold " + count(chosen, busy)
                    + " of the GPUs when the window starts; reserve from a later start, or with ignoreRunningJobs to have the "
                    + "reservation honoured on those GPUs once they end");
        }
        List<Reservation.Gpu> gpus = new ArrayList<>();
        chosen.stream().sorted().forEach(k -> gpus.add(new Reservation.Gpu(cluster.node((int) (k >> 8)).name(), (int) (k & 0xff))));
        String model = byNodes ? null : cluster.node((int) (chosen.getFirst() >> 8)).model().id();
        Reservation r = new Reservation(q.name(), q.tenant(), start, q.endMs(), gpus, model,
                byNodes ? List.copyOf(new LinkedHashSet<>(q.nodes())) : List.of());
        return new Planned(r, conflicts.stream().map(JobState::id).toList());
    }

    private static List<Long> nodesGpus(ReservationRequest q, ClusterState cluster, Map<Long, Held> taken, String where) {
        List<Long> chosen = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        Set<Held> clashes = new LinkedHashSet<>();
        for (int i = 0; i < q.nodes().size(); i++) {
            String name = q.nodes().get(i);
            Integer id = cluster.nodeId(name);
            if (id == null) throw new SpecException(where, "nodes[" + i + "]", "unknown node '" + name + "'");
            if (!seen.add(name)) continue;
            NodeState n = cluster.node(id);
            for (int g = 0; g < n.gpuCount(); g++) {
                long key = CycleState.gpuKey(id, g);
                if (taken.containsKey(key)) clashes.add(taken.get(key));
                chosen.add(key);
            }
        }
        if (!clashes.isEmpty()) {
            throw new SpecException(where, "nodes", "GPUs of these nodes are reserved in an overlapping window by " + describe(clashes));
        }
        if (chosen.isEmpty()) throw new SpecException(where, "nodes", "these nodes have no GPUs");
        return chosen;
    }

    /** The GPUs for a count of a model: whole nodes first (nodes with the most GPUs free of jobs, then the most free at all). */
    private static List<Long> modelGpus(ReservationRequest q, ClusterState cluster, Map<Long, Held> taken, Map<Long, JobState> busy, String where) {
        if (q.gpus() < 1) throw new SpecException(where, "gpus", "must be at least 1, got " + q.gpus());
        if (q.model() == null || q.model().isBlank()) throw new SpecException(where, "model", "is required with a number of GPUs");
        List<NodeState> nodes = new ArrayList<>();
        int total = 0;
        for (NodeState n : cluster.nodes()) {
            if (!n.model().id().equalsIgnoreCase(q.model())) continue;
            nodes.add(n);
            total += n.gpuCount();
        }
        if (total == 0) {
            throw new SpecException(where, "model", "the pool has no GPU of model '" + q.model() + "' (it has " + String.join(", ", cluster.modelIds()) + ")");
        }
        if (q.gpus() > total) {
            throw new SpecException(where, "gpus", "the pool has only " + total + " GPUs of model " + nodes.getFirst().model().id() + ", "
                    + q.gpus() + " asked");
        }
        Map<Integer, List<Long>> clean = new TreeMap<>(), occupied = new TreeMap<>();
        Set<Held> overlapping = new LinkedHashSet<>();
        int free = 0;
        for (NodeState n : nodes) {
            for (int g = 0; g < n.gpuCount(); g++) {
                long key = CycleState.gpuKey(n.id(), g);
                if (taken.containsKey(key)) {
                    overlapping.add(taken.get(key));
                    continue;
                }
                free++;
                (busy.containsKey(key) ? occupied : clean).computeIfAbsent(n.id(), k -> new ArrayList<>()).add(key);
            }
        }
        if (q.gpus() > free) {
            throw new SpecException(where, "gpus", q.gpus() + " GPUs of model " + nodes.getFirst().model().id() + " asked, but only " + free
                    + " of the pool's " + total + " are not reserved in that window: " + describe(overlapping) + " hold the others");
        }
        List<Long> chosen = new ArrayList<>();
        takeByNode(clean, occupied, q.gpus(), chosen);
        if (chosen.size() < q.gpus()) takeByNode(occupied, clean, q.gpus(), chosen);
        return chosen;
    }

    /** Takes GPUs from {@code from} node by node, the nodes with the most of them first (then the most in {@code also}). */
    private static void takeByNode(Map<Integer, List<Long>> from, Map<Integer, List<Long>> also, int want, List<Long> chosen) {
        List<Integer> order = new ArrayList<>(from.keySet());
        order.sort(Comparator.<Integer>comparingInt(n -> -from.get(n).size())
                .thenComparingInt(n -> -also.getOrDefault(n, List.of()).size()).thenComparingInt(n -> n));
        for (int n : order) {
            for (long g : from.get(n)) {
                if (chosen.size() == want) return;
                chosen.add(g);
            }
        }
    }

    private static int count(List<Long> chosen, Map<Long, JobState> busy) {
        int n = 0;
        for (long g : chosen) if (busy.containsKey(g)) n++;
        return n;
    }

    private static String describe(Set<JobState> jobs, long startMs) {
        StringBuilder s = new StringBuilder("running jobs of other tenants ");
        int i = 0;
        for (JobState j : jobs) {
            if (i++ > 0) s.append(", ");
            if (i > 10) {
                s.append("and ").append(jobs.size() - 10).append(" more");
                break;
            }
            s.append(j.id()).append(j.spec().timeLimitMs().isEmpty() ? " (no time limit)"
                    : " (time limit ends at " + ReservationTimes.render(j.runStartMs() + j.spec().timeLimitMs().getAsLong()) + ")");
        }
        return s.toString();
    }

    private static String describe(Set<Held> reservations) {
        StringBuilder s = new StringBuilder();
        for (Held h : reservations) {
            if (!s.isEmpty()) s.append(", ");
            s.append(h.reservation.describe());
        }
        return s.toString();
    }

    /**
     * Holds the reservation (planned here, or stored by a driver and given back after its restart); GPUs the pool does
     * not have (any more) are left out. Returns how many of its GPUs the pool has.
     */
    public int add(Reservation r, ClusterState cluster) {
        if (byName.containsKey(r.name())) throw new IllegalArgumentException("reservation " + r.name() + " already exists");
        Set<Long> keys = new HashSet<>();
        for (Reservation.Gpu g : r.gpus()) {
            Integer id = cluster.nodeId(g.node());
            if (id != null && g.index() >= 0 && g.index() < cluster.node(id).gpuCount()) keys.add(CycleState.gpuKey(id, g.index()));
        }
        Held h = new Held(r, nextId++, keys);
        byName.put(r.name(), h);
        byId.put(h.id, h);
        fences.clear();
        return keys.size();
    }

    /** Deletes a reservation; false when there is none of that name. */
    public boolean remove(String name) {
        Held h = byName.remove(name);
        if (h == null) return false;
        byId.remove(h.id);
        fences.clear();
        return true;
    }

    /** Removes and returns the reservations whose window has ended by {@code nowMs}. */
    public List<Reservation> expire(long nowMs) {
        List<Reservation> ended = new ArrayList<>();
        for (Held h : List.copyOf(byName.values())) {
            if (h.reservation.endMs() <= nowMs) {
                remove(h.reservation.name());
                ended.add(h.reservation);
            }
        }
        return ended;
    }

    /** The first start or end of a window after {@code nowMs} (Long.MAX_VALUE: none): who may use what changes then. */
    public long nextBoundaryAfter(long nowMs) {
        long next = Long.MAX_VALUE;
        for (Held h : byName.values()) {
            Reservation r = h.reservation;
            if (r.startMs() > nowMs) next = Math.min(next, r.startMs());
            else if (r.endMs() > nowMs) next = Math.min(next, r.endMs());
        }
        return next;
    }

    /** Whether a window starts or ends in ({@code fromMs}, {@code toMs}]. */
    public boolean boundaryIn(long fromMs, long toMs) {
        for (Held h : byName.values()) {
            Reservation r = h.reservation;
            if (fromMs < r.startMs() && r.startMs() <= toMs || fromMs < r.endMs() && r.endMs() <= toMs) return true;
        }
        return false;
    }

    /**
     * The GPUs reservations keep the job off at {@code nowMs}: for a job that runs in a reservation ({@code target}), all
     * but that reservation's (its window has begun: {@link #targetRefusal} holds it before); else the GPUs of every
     * reservation whose window has not ended and that the job may not use: another tenant's window it is in, or a window
     * it would run into (no time limit, or one that ends after the window starts).
     */
    public Fence fence(JobState job, String target, long nowMs) {
        if (byName.isEmpty()) return Fence.NONE;
        OptionalLong limit = job.spec().timeLimitMs();
        StringBuilder key = new StringBuilder();
        for (Held h : byName.values()) {
            Reservation r = h.reservation;
            if (r.endMs() <= nowMs) continue;
            boolean endsBefore = limit.isPresent() && nowMs + limit.getAsLong() <= r.startMs();
            boolean tenantsWindow = r.startMs() <= nowMs && r.tenant().equals(job.spec().tenant());
            if (endsBefore || tenantsWindow) continue;
            if (!key.isEmpty()) key.append(',');
            key.append(h.id);
        }
        if (target != null) {
            Held h = byName.get(target);
            if (h != null && h.reservation.activeAt(nowMs)) key.append('@').append(h.id);
        }
        return key.isEmpty() ? Fence.NONE : fences.computeIfAbsent(key.toString(), this::fenceOf);
    }

    /** The fence a key names: "3,5" (excluded: those reservations' GPUs), then "@7" (only reservation 7's GPUs). */
    private Fence fenceOf(String key) {
        int at = key.indexOf('@');
        String excluded = at < 0 ? key : key.substring(0, at);
        Set<Long> gpus = new HashSet<>();
        List<Reservation> of = new ArrayList<>();
        if (!excluded.isEmpty()) {
            for (String id : excluded.split(",")) {
                Held h = byId.get(Long.parseLong(id));
                gpus.addAll(h.gpus);
                of.add(h.reservation);
            }
        }
        Held within = at < 0 ? null : byId.get(Long.parseLong(key.substring(at + 1)));
        return new Fence(key, gpus, within == null ? null : Set.copyOf(within.gpus), of, within == null ? null : within.reservation);
    }

    /** Why a job that runs in the reservation may not start now (its window has not begun, or it is gone), or null. */
    public Status targetRefusal(String target, long nowMs) {
        Held h = byName.get(target);
        if (h == null || h.reservation.endMs() <= nowMs) {
            return Status.unschedulable(PLUGIN, Resource.NONE, "its reservation " + target + " no longer exists (it ended or was deleted); "
                    + "cancel the job, or update it to run without it");
        }
        if (nowMs < h.reservation.startMs()) {
            return Status.unschedulable(PLUGIN, Resource.NONE, "waits for its reservation " + h.reservation.describe() + " to start");
        }
        return null;
    }

    /** Why a job could never run in the reservation (unknown, another tenant's, too few or the wrong GPUs), or null. */
    public Status targetMisfit(JobSpec spec, String target, ClusterState cluster) {
        Held h = byName.get(target);
        if (h == null) return Status.unresolvable(PLUGIN, Resource.NONE, "no reservation named '" + target + "'");
        Reservation r = h.reservation;
        if (!r.tenant().equals(spec.tenant())) {
            return Status.unresolvable(PLUGIN, Resource.NONE, "reservation " + target + " is tenant " + r.tenant() + "'s, not " + spec.tenant() + "'s");
        }
        int usable = 0;
        for (long g : h.gpus) if (spec.allows(cluster.node((int) (g >> 8)).model())) usable++;
        if (spec.shape().totalGpus() > usable) {
            return Status.unresolvable(PLUGIN, Resource.GPUS, "reservation " + target + " has " + usable + " GPUs this job may use, it asks for "
                    + spec.shape().totalGpus());
        }
        return null;
    }
}
