package io.gpupool.k8s;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.gpupool.engine.JobState;
import io.gpupool.engine.JobStatus;
import io.gpupool.engine.RoundResult;
import io.gpupool.engine.Scheduler;
import io.gpupool.engine.SubmitResult;
import io.gpupool.engine.placement.CycleState;
import io.gpupool.engine.placement.PlacementResult;
import io.gpupool.engine.state.Allocation;
import io.gpupool.engine.state.GpuGrant;
import io.gpupool.engine.state.NodeState;
import io.gpupool.engine.status.Code;
import io.gpupool.engine.status.Resource;
import io.gpupool.engine.status.Status;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.GpuShare;
import io.gpupool.model.JobSpec;
import io.gpupool.model.NodeSpec;
import io.gpupool.model.SpecException;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.LongSupplier;
import java.util.logging.Logger;

/**
 * The cluster as the engine sees it, kept from the API server's nodes and pods. Both Kubernetes modes
 * drive it: the secondary scheduler queues its pending pods here and runs engine rounds; the extender asks
 * per node and binds where kube-scheduler chose. It does no I/O: it says what to bind, evict and report,
 * and the API side ({@code scheduler.ApiWriter}) does it. Not thread-safe: one owner, or a lock.
 *
 * <p>One engine job per bound pod (a gang is one job while it waits, then split per pod once placed, so
 * members can end at different times). The engine is built anew from the API's state whenever the set of
 * GPU nodes changes and at start: every pod that holds GPUs by its decision annotations takes exactly those
 * GPUs back ({@link Scheduler#restoreRunning}: a GPU recorded twice is refused, never handed out twice),
 * then pending pods queue again in creation order. Decayed fair-share history restarts at a rebuild.
 *
 * <p>Over 500 lines on purpose: the pod-to-job maps ({@code jobOfPod}, {@code podsOfJob}, the gang waiting room),
 * the engine and the bind backoff change together in every entry point, and the invariant they keep
 * (a pod that holds GPUs maps to exactly one running job holding exactly those GPUs) is read in one place. The
 * engine's decisions are behind {@link Scheduler}'s driver surface, what pods are told is {@link PodReports}; what is
 * here is only the Kubernetes side of the pod-to-job mapping.
 */
public final class ClusterModel {
    private static final Logger LOG = Logger.getLogger(ClusterModel.class.getName());
    /** Least time between two reports on a pod that still waits (impossible pods are reported once). */
    static final long WAIT_REPORT_INTERVAL_MS = 30_000;

    /** Bind this pod to this node with these devices (HAMi encoding), or the pod is already bound. */
    public record Decision(Pod pod, String namespace, String name, String uid, String node, String devices, String tenant,
                           String jobId, long atMs) {
        public String key() { return namespace + "/" + name; }
    }

    /**
     * Tell the pod's owner why it is not scheduled (an event and the PodScheduled condition): {@code message} as the
     * pod shows it, {@code status} the refusal it renders (the engine's, or this driver's own: {@link #POD_REQUEST},
     * {@link #GANG}, {@link #QUEUE}).
     */
    public record Report(String namespace, String name, String uid, String message, Status status) {
        /** Whether waiting cannot help (the pod can never run here as it asks). */
        public boolean impossible() { return status.code() == Code.UNRESOLVABLE; }
    }

    /** This driver's refusals: a pod's request gpupool cannot take, or that breaks its annotations. */
    public static final String POD_REQUEST = "pod-request";
    /** A gang's members: too few yet, or of different shapes. */
    public static final String GANG = "gang";
    /** A note on the queue that is no refusal (not reached in the last round, preempted). */
    public static final String QUEUE = "queue";

    /** A running pod the policy preempted: evict it. */
    public record Eviction(String namespace, String name, String uid, String reason) {}

    /** The extender's bind: the decision, or why the pod cannot go to that node. */
    public record BindOutcome(Decision decision, String error) {
        static BindOutcome failed(String why) { return new BindOutcome(null, why); }
    }

    /** The extender's answer for one pod over some nodes. */
    public record FilterOutcome(List<String> passed, Map<String, String> failed, Map<String, String> unresolvable) {}

    private final LongSupplier clock;
    private final K8sConfig config;
    private final GpuCatalog catalog;
    private final GpuNodes gpuNodes;
    private final boolean queuePendingPods;
    private final Map<String, Node> nodes = new HashMap<>();
    private final Map<String, NodeSpec> specs = new TreeMap<>();
    private final Map<String, Pod> pods = new LinkedHashMap<>();
    private final Map<String, String> keyOfUid = new HashMap<>();
    private final KubeNodeFilter kubeFilter = new KubeNodeFilter(nodes);
    private Scheduler engine;
    private boolean rebuildNeeded = true;
    private long lastMs;
    private final Map<String, String> jobOfPod = new HashMap<>();
    private final Map<String, List<String>> podsOfJob = new HashMap<>();
    private final Map<String, PodRequest> requestOfJob = new HashMap<>();
    private final Map<String, Map<String, PodRequest>> gangWaiting = new HashMap<>();
    private final Map<String, Long> retryAt = new HashMap<>();
    private final Map<String, Integer> bindFailures = new HashMap<>();
    private final PodReports reports = new PodReports();
    private final List<Eviction> evictions = new ArrayList<>();
    private int rebuilds;

    /**
     * @param queuePendingPods true for the secondary scheduler (pending pods with its scheduler name are
     *                         queued and placed by rounds); false for the extender (kube-scheduler queues)
     */
    public ClusterModel(K8sConfig config, GpuCatalog catalog, boolean queuePendingPods) {
        this(config, catalog, queuePendingPods, System::currentTimeMillis);
    }

    /** @param clock epoch ms (tests drive it past a backoff) */
    ClusterModel(K8sConfig config, GpuCatalog catalog, boolean queuePendingPods, LongSupplier clock) {
        this.clock = clock;
        this.config = config;
        this.catalog = catalog;
        this.gpuNodes = new GpuNodes(catalog, config.defaultSplitCount(), config.defaultMemoryScaling());
        this.queuePendingPods = queuePendingPods;
    }

    // ---- input from the API server ---------------------------------------------------------------

    /** A node was added or changed. */
    public void setNode(Node node) {
        String name = node.getMetadata().getName();
        nodes.put(name, node);
        NodeSpec spec;
        try {
            spec = gpuNodes.toSpec(node);
        } catch (SpecException e) {
            LOG.warning("ignoring the GPUs of " + e.getMessage());
            spec = null;
        }
        NodeSpec old = spec == null ? specs.remove(name) : specs.put(name, spec);
        if (!Objects.equals(old, spec)) rebuildNeeded = true;
        else if (spec != null && engine != null && !rebuildNeeded) engine.setCordoned(name, !GpuNodes.schedulable(node));
    }

    /** Forgets the engine's state; the next call rebuilds it from the nodes and pods seen (after an unexpected failure). */
    public void invalidate() {
        rebuildNeeded = true;
    }

    public void removeNode(String name) {
        nodes.remove(name);
        if (specs.remove(name) != null) rebuildNeeded = true;
    }

    /** A pod was added or changed. */
    public void setPod(Pod pod) {
        String key = Pods.key(pod);
        pods.put(key, pod);
        keyOfUid.put(pod.getMetadata().getUid(), key);
        if (engine == null || rebuildNeeded) return;
        apply(key, pod);
    }

    public void removePod(String key) {
        Pod p = pods.remove(key);
        if (p != null) keyOfUid.remove(p.getMetadata().getUid());
        if (engine == null || rebuildNeeded) return;
        drop(key);
        reports.forget(key);
        retryAt.remove(key);
        bindFailures.remove(key);
    }

    // ---- the secondary scheduler ----------------------------------------------------------------

    /** One round: places what the policy lets start; returns the pods to bind, in placement order. */
    public List<Decision> schedule() {
        long due = ensureBuilt();
        List<String> backedOff = retryAt.entrySet().stream().filter(e -> e.getValue() <= due).map(Map.Entry::getKey).toList();
        for (String key : backedOff) {
            retryAt.remove(key);   // first: admit skips a pod still in backoff
            Pod p = pods.get(key);
            if (p != null && role(p) == Role.PENDING && jobOfPod.get(key) == null) admit(key, p);
        }
        long now = now();
        RoundResult r = engine.schedule(now);
        for (String id : r.preempted()) {
            for (String key : podsOfJob.getOrDefault(id, List.of())) {
                Pod p = pods.get(key);
                if (p != null) evictions.add(new Eviction(p.getMetadata().getNamespace(), p.getMetadata().getName(), p.getMetadata().getUid(), engine.job(id).waitReason()));
            }
            // the pod goes away: it will not come back to this queue (its controller makes a new one)
            engine.cancel(id, now);
            forgetJob(id);
        }
        List<Decision> out = new ArrayList<>();
        for (String id : r.started()) out.addAll(started(id, now));
        reportWaiting(now);
        return out;
    }

    /** The API refused the binding of a decided pod: give its GPUs back; a pod still pending queues again. */
    public void bindFailed(Decision d) {
        if (engine == null) return;
        String id = jobOfPod.get(d.key());
        if (id == null) return;
        long now = now();
        engine.cancel(id, now);
        forgetJob(id);
        // kube-scheduler's pod backoff: 1 s, doubling per failure, at most 10 s, before the pod queues again
        int failures = bindFailures.merge(d.key(), 1, Integer::sum);
        retryAt.put(d.key(), now + Math.min(10_000L, 1000L << Math.min(failures - 1, 4)));
    }

    public List<Report> drainReports() {
        return reports.drain();
    }

    public List<Eviction> drainEvictions() {
        List<Eviction> out = List.copyOf(evictions);
        evictions.clear();
        return out;
    }

    // ---- the extender ----------------------------------------------------------------------------

    /** Which of these nodes can take the pod now (kube-scheduler's filter). */
    public FilterOutcome filter(Pod pod, List<String> nodeNames) {
        ensureBuilt();
        List<String> passed = new ArrayList<>();
        Map<String, String> failed = new TreeMap<>();
        Map<String, String> unresolvable = new TreeMap<>();
        PodRequest req;
        try {
            req = PodRequest.of(pod, catalog);
        } catch (SpecException e) {
            nodeNames.forEach(n -> unresolvable.put(n, e.getMessage()));
            return new FilterOutcome(passed, failed, unresolvable);
        }
        if (req == null) return new FilterOutcome(List.copyOf(nodeNames), failed, unresolvable);
        if (req.gang() != null) {
            String why = "gang pods (" + KubeNames.GANG + ") need gpupool's secondary scheduler: kube-scheduler's extender sees one pod at a time";
            nodeNames.forEach(n -> unresolvable.put(n, why));
            return new FilterOutcome(passed, failed, unresolvable);
        }
        CycleState cycle = cycle(pod, req);
        for (String name : nodeNames) {
            Integer id = engine.cluster().nodeId(name);
            if (id == null) {
                unresolvable.put(name, "node has no GPUs gpupool knows of (no HAMi registration, no GPU feature discovery labels)");
                continue;
            }
            Status why = engine.pipeline().filterNode(cycle, engine.cluster().node(id));
            if (why == null) passed.add(name);
            else if (why.unresolvable()) unresolvable.put(name, why.message());
            else failed.put(name, why.message());
        }
        return new FilterOutcome(passed, failed, unresolvable);
    }

    /** Scores 0..maxScore for the nodes that can take the pod (0 for the others); higher is better. */
    public Map<String, Long> prioritize(Pod pod, List<String> nodeNames, long maxScore) {
        ensureBuilt();
        Map<String, Long> scores = new LinkedHashMap<>();
        nodeNames.forEach(n -> scores.put(n, 0L));
        PodRequest req = PodRequest.of(pod, catalog);
        // what filter() passes for a GPU pod, filterAndScore filters itself (unknown nodes left out): one pass per node
        if (req == null || req.gang() != null) return scores;
        scores.putAll(engine.filterAndScore(job(Pods.key(pod), pod, req, 1), nodeNames, maxScore));
        return scores;
    }

    /** Places the pod on the node kube-scheduler chose (its bind): the decision, or why not. */
    public BindOutcome bind(Pod pod, String node) {
        long now = ensureBuilt();
        String key = Pods.key(pod);
        pods.put(key, pod);
        keyOfUid.put(pod.getMetadata().getUid(), key);
        String existing = jobOfPod.get(key);
        if (existing != null) {
            JobState j = engine.job(existing);
            if (j != null && j.status() == JobStatus.RUNNING) {
                return j.allocation().grants().stream().allMatch(g -> engine.cluster().node(g.node()).name().equals(node))
                        ? new BindOutcome(decision(key, pod, requestOfJob.get(existing), j.allocation().replicas().getFirst(), existing, now), null)
                        : BindOutcome.failed("pod " + key + " is already placed on another node");
            }
        }
        PodRequest req;
        try {
            req = PodRequest.of(pod, catalog);
        } catch (SpecException e) {
            return BindOutcome.failed(e.getMessage());
        }
        if (req == null) return BindOutcome.failed("pod " + key + " asks for no GPU; gpupool binds only GPU pods");
        if (engine.cluster().nodeId(node) == null) return BindOutcome.failed("node " + node + " has no GPUs gpupool knows of");
        JobSpec spec = job(key, pod, req, 1);
        SubmitResult s = engine.submit(spec, now);
        if (!s.accepted()) {
            engine.forget(key);
            return BindOutcome.failed(s.reason());
        }
        kubeFilter.track(key, pod);
        PlacementResult pr = engine.startOn(key, node, now);
        if (!pr.ok()) {
            engine.cancel(key, now);
            engine.forget(key);
            kubeFilter.untrack(key);
            return BindOutcome.failed(pr.reason());
        }
        map(key, List.of(key), req);
        return new BindOutcome(decision(key, pod, req, pr.allocation().replicas().getFirst(), key, now), null);
    }

    /**
     * Of the victims kube-scheduler proposes per node, the nodes where evicting them lets the pod's GPUs
     * fit (a what-if on the engine's state, rolled back); the victims are kept as given.
     */
    public Map<String, List<String>> preempt(Pod pod, Map<String, List<String>> victimUidsByNode) {
        ensureBuilt();
        PodRequest req;
        try {
            req = PodRequest.of(pod, catalog);
        } catch (SpecException e) {
            return Map.of();
        }
        if (req == null) return victimUidsByNode;
        Map<String, List<String>> out = new TreeMap<>();
        JobSpec spec = job(Pods.key(pod), pod, req, 1);
        for (var e : victimUidsByNode.entrySet()) {
            if (engine.cluster().nodeId(e.getKey()) == null) continue;
            List<String> gone = new ArrayList<>();
            for (String uid : e.getValue()) {
                String job = jobOfPod.get(keyOfUid.getOrDefault(uid, ""));
                if (job != null) gone.add(job);
            }
            if (engine.wouldFitWithout(spec, e.getKey(), gone)) out.put(e.getKey(), e.getValue());
        }
        return out;
    }

    /**
     * Pods of this scheduler whose decision is written but that are not bound (the replica that wrote it
     * stopped in between): their GPUs are held, so the binding is finished rather than decided anew.
     */
    public List<Decision> unboundDecisions() {
        long now = ensureBuilt();
        List<Decision> out = new ArrayList<>();
        for (Pod p : pods.values()) {
            String key = Pods.key(p);
            if (role(p) != Role.HOLDS || Pods.nodeName(p) != null || !config.schedulerName().equals(p.getSpec().getSchedulerName())) continue;
            String id = jobOfPod.get(key);
            JobState j = id == null ? null : engine.job(id);
            if (j == null || j.status() != JobStatus.RUNNING) continue;
            out.add(new Decision(p, p.getMetadata().getNamespace(), p.getMetadata().getName(), p.getMetadata().getUid(),
                    assignedNode(p), Pods.annotations(p).get(KubeNames.DEVICES_ALLOCATED), config.tenantOf(p.getMetadata().getNamespace()), id, now));
        }
        return out;
    }

    // ---- views for tests and metrics --------------------------------------------------------------

    /** The engine (built on first use); read it, change it only through this class. */
    public Scheduler engine() {
        ensureBuilt();
        return engine;
    }

    public int rebuilds() { return rebuilds; }

    public String jobOf(String podKey) { return jobOfPod.get(podKey); }

    // ---- internals -------------------------------------------------------------------------------

    private enum Role { GONE, HOLDS, PENDING, OTHER }

    private Role role(Pod p) {
        if (Pods.terminal(p) || Pods.deleting(p)) return Role.GONE;
        String node = assignedNode(p);
        if (node != null) return Role.HOLDS;
        if (queuePendingPods && config.schedulerName().equals(p.getSpec().getSchedulerName())) return Role.PENDING;
        return Role.OTHER;
    }

    /** The node whose GPUs the pod holds: its decision annotation, else the node it is bound to. */
    private static String assignedNode(Pod p) {
        String a = Pods.annotations(p).get(KubeNames.ASSIGNED_NODE);
        return a != null && !a.isEmpty() ? a : Pods.nodeName(p);
    }

    private long now() {
        lastMs = Math.max(lastMs, clock.getAsLong());
        return lastMs;
    }

    private long ensureBuilt() {
        long now = now();
        if (engine == null || rebuildNeeded) rebuild(now);
        return now;
    }

    private void rebuild(long now) {
        rebuilds++;
        rebuildNeeded = false;
        engine = new Scheduler(new ClusterSpec(List.copyOf(specs.values())), config.schedulerConfig());
        engine.addFilter(kubeFilter);
        kubeFilter.clear();
        jobOfPod.clear();
        podsOfJob.clear();
        requestOfJob.clear();
        gangWaiting.clear();
        retryAt.clear();
        for (String n : specs.keySet()) if (!GpuNodes.schedulable(nodes.get(n))) engine.setCordoned(n, true);
        // pods that hold GPUs first, in the order they got them, so an older claim wins a conflict
        List<Pod> holding = pods.values().stream().filter(p -> role(p) == Role.HOLDS)
                .sorted(Comparator.comparingLong(ClusterModel::boundAtMs).thenComparing(Pods::key)).toList();
        for (Pod p : holding) restore(Pods.key(p), p, now);
        pods.values().stream().filter(p -> role(p) == Role.PENDING)
                .sorted(Comparator.comparingLong(Pods::createdMs).thenComparing(Pods::key))
                .forEach(p -> admit(Pods.key(p), p));
    }

    private static long boundAtMs(Pod p) {
        try {
            return Long.parseLong(Pods.annotations(p).getOrDefault(KubeNames.BIND_TIME, "")) * 1000;
        } catch (NumberFormatException e) {
            return Pods.createdMs(p);
        }
    }

    private void apply(String key, Pod pod) {
        String job = jobOfPod.get(key);
        switch (role(pod)) {
            case GONE -> drop(key);
            case HOLDS -> {
                JobState j = job == null ? null : engine.job(job);
                if (j != null && j.status() == JobStatus.RUNNING) return;
                if (job != null) drop(key);   // queued here but bound by someone else (another replica, a user)
                restore(key, pod, now());
            }
            case PENDING -> {
                if (job == null && !inGangWaiting(key)) admit(key, pod);
            }
            case OTHER -> {
                if (job != null) drop(key);
            }
        }
    }

    private boolean inGangWaiting(String key) {
        return gangWaiting.values().stream().anyMatch(m -> m.containsKey(key));
    }

    /** A pending pod of ours joins the queue (or its gang's waiting room), or is reported as impossible. */
    private void admit(String key, Pod pod) {
        if (retryAt.containsKey(key)) return;   // in backoff after a refused binding
        PodRequest req;
        try {
            req = PodRequest.of(pod, catalog);
        } catch (SpecException e) {
            reports.refusal(pod, Status.unresolvable(POD_REQUEST, Resource.NONE, e.getMessage()));
            return;
        }
        if (req == null) {
            reports.refusal(pod, Status.unresolvable(POD_REQUEST, Resource.NONE,
                    "asks for no GPU (" + KubeNames.GPU + "); gpupool places GPU pods only, leave the others to the default scheduler"));
            return;
        }
        if (req.gang() == null) {
            submit(key, List.of(pod), req);
            return;
        }
        String gangKey = "gang:" + pod.getMetadata().getNamespace() + "/" + req.gang();
        boolean gangRunning = podsOfJob.entrySet().stream().anyMatch(e -> !e.getKey().equals(gangKey)
                && e.getValue().stream().map(pods::get).filter(Objects::nonNull)
                .anyMatch(p -> req.gang().equals(Pods.annotations(p).get(KubeNames.GANG)) && p.getMetadata().getNamespace().equals(pod.getMetadata().getNamespace())));
        if (gangRunning) {   // the gang has started: a late or replaced member is placed on its own
            submit(key, List.of(pod), req);
            return;
        }
        if (podsOfJob.containsKey(gangKey)) {   // the gang is queued: it grows by this member
            List<String> members = new ArrayList<>(podsOfJob.get(gangKey));
            engine.cancel(gangKey, now());
            forgetJob(gangKey);
            Map<String, PodRequest> waiting = new LinkedHashMap<>();
            for (String m : members) waiting.put(m, PodRequest.of(pods.get(m), catalog));
            gangWaiting.put(gangKey, waiting);
        }
        Map<String, PodRequest> waiting = gangWaiting.computeIfAbsent(gangKey, k -> new LinkedHashMap<>());
        PodRequest first = waiting.values().stream().findFirst().orElse(req);
        if (!first.sameShape(req) || first.gangMinMembers() != req.gangMinMembers()) {
            reports.refusal(pod, Status.unresolvable(GANG, Resource.NONE, "differs from the other members of gang " + req.gang()
                    + " (GPUs, GPU types, NVLink or min members); gang members are replicas of one shape"));
            return;
        }
        waiting.put(key, req);
        if (waiting.size() < req.gangMinMembers()) {
            for (String m : waiting.keySet()) {
                reports.refusal(pods.get(m), Status.unschedulable(GANG, Resource.NONE, "waits for gang " + req.gang() + ": " + waiting.size() + " of "
                        + req.gangMinMembers() + " members are here"));
            }
            return;
        }
        List<Pod> members = waiting.keySet().stream().sorted(Comparator.comparingLong((String m) -> Pods.createdMs(pods.get(m))).thenComparing(m -> m))
                .map(pods::get).toList();
        // A gang refused as impossible keeps its waiting room, so its members' updates (the refusal's own
        // PodScheduled condition among them) do not admit them again one by one: each would be told it waits
        // for the others, the gang refused again once they followed, and so on, until members are left
        // saying they wait. A new member, or a rebuild for new nodes, judges the gang again.
        if (submit(gangKey, members, req)) gangWaiting.remove(gangKey);
    }

    private JobSpec job(String id, Pod pod, PodRequest req, int replicas) {
        String ns = pod.getMetadata().getNamespace();
        return req.toJob(id, config.tenantOf(ns), ns, id, Pods.createdMs(pod), replicas);
    }

    /** Queues the pods as one job; false when the engine refuses it as impossible (the pods are told why). */
    private boolean submit(String id, List<Pod> members, PodRequest req) {
        Pod first = members.getFirst();
        SubmitResult r = engine.submit(job(id, first, req, members.size()), now());
        if (!r.accepted()) {
            engine.forget(id);
            for (Pod p : members) reports.refusal(p, r.status().within("cannot run on this cluster: "));
            return false;
        }
        kubeFilter.track(id, first);
        map(id, members.stream().map(Pods::key).toList(), req);
        return true;
    }

    private void map(String id, List<String> keys, PodRequest req) {
        podsOfJob.put(id, List.copyOf(keys));
        requestOfJob.put(id, req);
        keys.forEach(k -> jobOfPod.put(k, id));
    }

    private void forgetJob(String id) {
        engine.forget(id);
        kubeFilter.untrack(id);
        requestOfJob.remove(id);
        List<String> keys = podsOfJob.remove(id);
        if (keys != null) keys.forEach(k -> jobOfPod.remove(k, id));
    }

    /** The pod no longer needs its GPUs or its place in the queue. */
    private void drop(String key) {
        gangWaiting.values().forEach(m -> m.remove(key));
        String id = jobOfPod.get(key);
        if (id == null) return;
        JobState j = engine.job(id);
        long now = now();
        List<String> members = podsOfJob.getOrDefault(id, List.of());
        if (j != null && j.status() == JobStatus.RUNNING) engine.complete(id, now);
        else if (j != null && j.status() == JobStatus.PENDING) engine.cancel(id, now);
        forgetJob(id);
        // a queued gang that lost a member waits again for enough members
        for (String m : members) {
            Pod p = pods.get(m);
            if (!m.equals(key) && p != null && role(p) == Role.PENDING) admit(m, p);
        }
    }

    /** A started job: one decision per pod; a gang is split into one running job per pod. */
    private List<Decision> started(String id, long now) {
        JobState j = engine.job(id);
        List<String> keys = podsOfJob.get(id);
        PodRequest req = requestOfJob.get(id);
        List<List<GpuGrant>> replicas = j.allocation().replicas();
        if (keys.size() > 1) {
            engine.cancel(id, now);
            forgetJob(id);
            for (int i = 0; i < keys.size(); i++) {
                String key = keys.get(i);
                SubmitResult r = engine.restoreRunning(job(key, pods.get(key), req, 1), new Allocation(key, List.of(replicas.get(i))), now, now);
                if (!r.accepted()) throw new IllegalStateException("gang member " + key + " lost its GPUs while splitting: " + r.reason());
                kubeFilter.track(key, pods.get(key));
                map(key, List.of(key), req);
            }
        }
        // what this round said of these pods before placing them (a gang member told it waits, while the
        // rebuild or one batch of events brought the others) is stale: written after the binding, it would
        // mark a bound pod unschedulable
        reports.bound(keys);
        List<Decision> out = new ArrayList<>();
        for (int i = 0; i < keys.size(); i++) {
            String key = keys.get(i);
            out.add(decision(key, pods.get(key), req, replicas.get(i), keys.size() > 1 ? id : key, now));
        }
        return out;
    }

    private Decision decision(String key, Pod pod, PodRequest req, List<GpuGrant> grants, String jobId, long now) {
        NodeState n = engine.cluster().node(grants.getFirst().node());
        List<DeviceAnnotations.Device> devs = new ArrayList<>();
        for (GpuGrant g : grants) {
            String uuid = n.spec().gpus().get(g.gpu()).uuid();
            long mem = g.exclusive() ? n.model().memoryMib() : g.memoryMib();
            devs.add(new DeviceAnnotations.Device(uuid, KubeNames.NVIDIA, mem, req.cores()));
        }
        List<List<DeviceAnnotations.Device>> containers = new ArrayList<>();
        int count = pod.getSpec().getContainers().size();
        for (int c = 0; c < count; c++) containers.add(c == req.container() ? devs : List.of());
        return new Decision(pod, pod.getMetadata().getNamespace(), pod.getMetadata().getName(), pod.getMetadata().getUid(), n.name(),
                DeviceAnnotations.encode(containers), config.tenantOf(pod.getMetadata().getNamespace()), jobId, now);
    }

    /** A pod that holds GPUs by its decision annotations (or, without them, by being bound to a GPU node). */
    private void restore(String key, Pod pod, long now) {
        String node = assignedNode(pod);
        Integer nodeId = engine.cluster().nodeId(node);
        if (nodeId == null) return;   // not a GPU node (yet): a rebuild takes the pod in when the node appears
        NodeState n = engine.cluster().node(nodeId);
        Map<String, String> ann = Pods.annotations(pod);
        String encoded = ann.getOrDefault(KubeNames.DEVICES_ALLOCATED, ann.get(KubeNames.DEVICES_TO_ALLOCATE));
        PodRequest req = null;
        try {
            req = PodRequest.of(pod, catalog);
        } catch (SpecException e) {
            // a pod placed by HAMi may ask for what gpupool would refuse: its annotations still say what it holds
        }
        List<DeviceAnnotations.Device> devices;
        try {
            devices = DeviceAnnotations.decode(encoded, "pod " + key + " annotation " + KubeNames.DEVICES_ALLOCATED)
                    .stream().flatMap(List::stream).toList();
        } catch (SpecException e) {
            reports.refusal(pod, Status.error(POD_REQUEST, e.getMessage()));
            return;
        }
        if (devices.isEmpty()) {
            if (req == null || !req.share().isWhole()) return;
            // bound by another scheduler without a device record: count its GPUs, which ones is the device plugin's choice
            JobSpec spec = job(key, pod, req, 1);
            if (!engine.submit(spec, now).accepted()) { engine.forget(key); return; }
            PlacementResult r = engine.startOn(key, node, now);
            if (!r.ok()) {
                engine.cancel(key, now);
                engine.forget(key);
                LOG.warning("pod " + key + " on " + node + " uses GPUs gpupool cannot account for: " + r.reason());
                return;
            }
            map(key, List.of(key), req);
            return;
        }
        List<GpuGrant> grants = new ArrayList<>();
        boolean whole = req != null ? req.share().isWhole() : devices.stream().allMatch(d -> d.memoryMib() >= n.model().memoryMib());
        for (DeviceAnnotations.Device d : devices) {
            int idx = indexOf(n, d.uuid());
            if (idx < 0) {
                reports.refusal(pod, Status.error(POD_REQUEST, "holds GPU " + d.uuid() + " which node " + node + " does not have"));
                return;
            }
            grants.add(whole ? new GpuGrant(nodeId, idx, GpuShare.WHOLE, n.memoryCapacityMib(), true)
                    : new GpuGrant(nodeId, idx, req != null ? req.share().milli() : Math.max(1, d.cores() * 10), d.memoryMib(), false));
        }
        PodRequest effective = req != null && req.gpus() == grants.size() ? req
                : new PodRequest(0, grants.size(), whole ? GpuShare.WHOLE_GPU : new GpuShare(grants.getFirst().milli(), grants.getFirst().memoryMib()),
                devices.getFirst().cores(), java.util.Set.of(), false, null, 1, 0, java.util.OptionalLong.empty());
        SubmitResult r = engine.restoreRunning(job(key, pod, effective, 1), new Allocation(key, List.of(grants)), boundAtMs(pod), now);
        if (!r.accepted()) {
            engine.forget(key);
            reports.refusal(pod, r.status().within("its recorded GPUs cannot be taken back: "));
            LOG.warning("pod " + key + ": " + r.reason());
            return;
        }
        kubeFilter.track(key, pod);
        map(key, List.of(key), effective);
    }

    private static int indexOf(NodeState n, String uuid) {
        for (int i = 0; i < n.gpuCount(); i++) if (n.spec().gpus().get(i).uuid().equals(uuid)) return i;
        return -1;
    }

    private CycleState cycle(Pod pod, PodRequest req) {
        String key = Pods.key(pod);
        return new CycleState(engine.cluster(), job(key, pod, req, 1), engine.workloadProfile(), null);
    }

    private void reportWaiting(long now) {
        for (JobState j : engine.pendingJobs()) {
            String why = j.waitReason();
            if (why == null) continue;
            Status status = j.waitStatus() != null ? j.waitStatus() : Status.unschedulable(QUEUE, Resource.NONE, why);
            for (String key : podsOfJob.getOrDefault(j.id(), List.of())) {
                Pod p = pods.get(key);
                if (p != null) reports.waiting(p, why, status, now);
            }
        }
    }
}
