package io.gpupool.optimize;

import com.google.ortools.sat.BoolVar;
import com.google.ortools.sat.CpModel;
import com.google.ortools.sat.CpSolver;
import com.google.ortools.sat.IntVar;
import com.google.ortools.sat.LinearExpr;
import com.google.ortools.sat.LinearExprBuilder;
import com.google.ortools.sat.Literal;
import io.gpupool.engine.placement.CycleState;
import io.gpupool.engine.placement.FilterPlugin;
import io.gpupool.engine.placement.PlacementPlugins;
import io.gpupool.engine.placement.ReplicaDemand;
import io.gpupool.engine.placement.plugins.GivenGpus;
import io.gpupool.engine.state.ClusterState;
import io.gpupool.engine.state.NodeState;
import io.gpupool.model.GpuShare;
import io.gpupool.model.JobSpec;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The batch placement model for CP-SAT, aggregated so that interchangeable things share one variable:
 * <ul>
 *   <li>jobs that need the same from every node (a <em>type</em>) share their placement counts; which jobs
 *       of a type run is one boolean per job, best value first, so only the count is really searched;</li>
 *   <li>whole-GPU replicas are counted per node, or per NVLink domain when they must sit in one;</li>
 *   <li>fractional shares, on nodes that form groups of interchangeable nodes (the usual case), are modelled
 *       exactly with fill patterns per class of GPUs in the same state ({@link ShareGroup}): each GPU takes one
 *       maximal pattern of shares and each share kind is covered by the chosen patterns, with the number of
 *       idle GPUs the shares open per node. This is the cutting-stock relaxation, tight enough for the LP
 *       bound (with CP-SAT's full linearization) to prove optimality;</li>
 *   <li>elsewhere (a node whose idle GPUs differ, a group with too many patterns) shares are counted per node,
 *       with the number of idle GPUs they open; the GPUs of a node are summed (compute, memory, task slots,
 *       and for each share size how many such shares the GPUs can hold). Sums can admit a set of shares that
 *       does not actually pack onto the GPUs, so every such node's answer is checked by exact bin packing
 *       ({@link SharePacking}); a set that does not pack gets a cut (it needs one more idle GPU) and the model
 *       is solved again ({@link CpSatSolver}). That part is a relaxation made exact lazily.</li>
 * </ul>
 * Where a replica may go comes from the engine: a node is a candidate when the pipeline's filters pass it,
 * an NVLink domain or a GPU when {@link GivenGpus} accepts it; the answer goes back through the engine's own
 * check ({@link EngineCheck}). {@link CpSatPlacements} turns a known placement into hints and an answer into
 * allocations.
 */
final class CpSatModel {
    final CpModel model = new CpModel();
    final BatchProblem p;
    final ClusterState cluster;
    private final PackingBounds bounds;
    final List<JobType> types = new ArrayList<>();
    final Map<Integer, NodeShares> shares = new LinkedHashMap<>();
    private final List<BoolVar> gangNodeUse = new ArrayList<>();
    /** Nodes whose shares are modelled exactly by fill patterns, in groups of interchangeable nodes. */
    final List<ShareGroup> groups = new ArrayList<>();
    private final java.util.Set<Integer> patterned = new java.util.HashSet<>();
    final LinearExpr value;
    final LinearExpr penalty;
    int cuts;

    /** Placement counts of one job type. */
    static final class JobType {
        final int[] jobs;            // window indices, best value first
        final JobSpec spec;          // a representative
        final ReplicaDemand demand;
        final BoolVar[] run;         // run[i]: jobs[i] is placed
        final List<Slot> slots = new ArrayList<>();

        JobType(int[] jobs, JobSpec spec, BoolVar[] run) {
            this.jobs = jobs;
            this.spec = spec;
            this.demand = ReplicaDemand.of(spec);
            this.run = run;
        }

        boolean share() { return !demand.exclusive(); }
        boolean inDomain() { return demand.exclusive() && demand.requireNvlink() && demand.gpus() > 1; }
        int replicas() { return share() ? 1 : spec.shape().replicas(); }
    }

    /** Replicas of a type on a node (domain -1) or in one NVLink domain of it; shares are counted per node. */
    record Slot(JobType type, int node, int domain, IntVar count, long max) {}

    /** The share side of one node: its GPUs that take shares and the idle GPUs shares open. */
    final class NodeShares {
        final NodeState n;
        final int[] sharedGpus;            // GPUs already holding shares that can take more
        final int[] idleGpus;              // fully free GPUs
        final IntVar opened;               // idle GPUs the shares use
        final Map<Integer, IntVar> openedInDomain = new LinkedHashMap<>();  // when domain-bound replicas compete
        IntVar openedOutsideDomains;
        final List<Slot> slots = new ArrayList<>();

        NodeShares(NodeState n) {
            this.n = n;
            List<Integer> shared = new ArrayList<>();
            List<Integer> idle = new ArrayList<>();
            for (int g = 0; g < n.gpuCount(); g++) {
                if (n.isFullyFree(g)) idle.add(g);
                else if (n.canShare(g)) shared.add(g);
            }
            sharedGpus = shared.stream().mapToInt(Integer::intValue).toArray();
            idleGpus = idle.stream().mapToInt(Integer::intValue).toArray();
            opened = model.newIntVar(0, idleGpus.length, "opened_" + n.name());
        }

        /** Bins for the packing check: the shared GPUs, then {@code idle} idle GPUs. */
        List<SharePacking.Bin> bins(int idle) {
            List<SharePacking.Bin> bins = new ArrayList<>();
            for (int g : sharedGpus) bins.add(new SharePacking.Bin(n.freeMilli(g), n.freeMemoryMib(g), n.spec().splitCount() - n.tasks(g)));
            for (int i = 0; i < idle; i++) bins.add(new SharePacking.Bin(1000, n.memoryCapacityMib(), n.spec().splitCount()));
            return bins;
        }

        /** Which of {@link #bins} a share of this type may take, as the engine's GPU rule says. */
        boolean[] allowed(JobType t, int idle) {
            CycleState cycle = new CycleState(cluster, t.spec, p.profile(), null);
            boolean[] ok = new boolean[sharedGpus.length + idle];
            for (int i = 0; i < sharedGpus.length; i++) ok[i] = GivenGpus.check(cycle, t.demand, n, new int[] {sharedGpus[i]}) == null;
            boolean idleOk = idleGpus.length > 0 && GivenGpus.check(cycle, t.demand, n, new int[] {idleGpus[0]}) == null;
            for (int i = 0; i < idle; i++) ok[sharedGpus.length + i] = idleOk;
            return ok;
        }

        List<SharePacking.Item> items(CpSolver solver, int idle) {
            List<SharePacking.Item> items = new ArrayList<>();
            for (Slot s : slots) {
                long c = solver.value(s.count());
                boolean[] ok = allowed(s.type(), idle);
                long mem = s.type().demand.memoryOn(n.model(), n.memoryCapacityMib());
                for (long i = 0; i < c; i++) items.add(new SharePacking.Item(s.type().demand.milli(), mem, ok));
            }
            return items;
        }
    }

    /** @param patternLimit fill patterns per GPU class beyond which a node group falls back to packing cuts */
    CpSatModel(BatchProblem p, int patternLimit) {
        this.p = p;
        this.cluster = p.cluster();
        buildTypes();
        this.bounds = new PackingBounds(types.stream().filter(JobType::share).mapToInt(t -> t.demand.milli()).toArray());
        buildShareGroups(patternLimit);
        LinearExprBuilder obj = LinearExpr.newBuilder();
        for (JobType t : types) {
            for (int i = 0; i < t.jobs.length; i++) {
                obj.addTerm(t.run[i], p.value(t.jobs[i]));
                if (i > 0) model.addImplication(t.run[i], t.run[i - 1]);
            }
            addSlots(t);
            LinearExprBuilder placed = LinearExpr.newBuilder();
            for (Slot s : t.slots) placed.add(s.count());
            for (ShareGroup g : groups) if (g.count.containsKey(t)) placed.add(g.count.get(t));
            LinearExprBuilder jobsRun = LinearExpr.newBuilder();
            for (BoolVar b : t.run) jobsRun.addTerm(b, t.replicas());
            model.addEquality(placed, jobsRun);
        }
        value = obj.build();
        for (NodeShares ns : shares.values()) if (!patterned.contains(ns.n.id())) addShareCapacity(ns);
        addIdleGpuCapacity();
        LinearExprBuilder pen = LinearExpr.newBuilder();
        for (NodeShares ns : shares.values()) pen.add(ns.opened);
        for (BoolVar u : gangNodeUse) pen.add(u);
        // a re-pack that may preempt (start jobs not required): each start job left out weighs more than all
        // of the rest of the penalty, so that phase 2 first keeps as many running as the value allows
        long most = gangNodeUse.size() + 1;
        for (NodeShares ns : shares.values()) most += ns.idleGpus.length;
        for (JobType t : types) {
            for (int i = 0; i < t.jobs.length; i++) {
                if (p.inStart(t.jobs[i]) && !p.required(t.jobs[i])) pen.addTerm(t.run[i].not(), most);
            }
        }
        penalty = pen.build();
    }

    private void buildTypes() {
        for (List<Integer> group : p.byShapeClass()) {
            // required jobs first: with "run[i] implies run[i-1]" forcing them is forcing a prefix; then the
            // other jobs of the start (running shares a re-pack may preempt): a type's waiting job never
            // takes the place of its running one
            int[] jobs = group.stream().sorted(Comparator.comparingInt((Integer j) -> p.required(j) ? 0 : p.inStart(j) ? 1 : 2)
                            .thenComparingLong(j -> -p.value(j)).thenComparingInt(j -> j))
                    .mapToInt(Integer::intValue).toArray();
            BoolVar[] run = new BoolVar[jobs.length];
            for (int i = 0; i < jobs.length; i++) {
                run[i] = model.newBoolVar("run_" + p.job(jobs[i]).id());
                if (p.required(jobs[i])) model.addEquality(run[i], 1);
            }
            types.add(new JobType(jobs, p.job(jobs[0]), run));
        }
    }

    /**
     * Groups nodes whose shares can be modelled by fill patterns ({@link ShareGroup}): same GPU model, memory,
     * task slots, share types passing the filters and GPU rule on idle GPUs. A node whose idle GPUs differ, or
     * a group with too many patterns, is left to the per-node relaxation with packing cuts.
     */
    private void buildShareGroups(int patternLimit) {
        List<JobType> shareTypes = types.stream().filter(JobType::share).toList();
        if (shareTypes.isEmpty()) return;
        List<FilterPlugin> filters = PlacementPlugins.defaultFilters();
        List<CycleState> cycles = shareTypes.stream().map(t -> new CycleState(cluster, t.spec, p.profile(), null)).toList();
        Map<String, List<NodeState>> members = new LinkedHashMap<>();
        Map<String, List<JobType>> passingOf = new HashMap<>();
        Map<Integer, boolean[][]> allowed = new HashMap<>();
        for (NodeState n : cluster.nodes()) {
            List<Integer> passing = new ArrayList<>();
            for (int i = 0; i < shareTypes.size(); i++) {
                boolean pass = true;
                for (FilterPlugin f : filters) pass &= f.filter(cycles.get(i), shareTypes.get(i).demand, n) == null;
                if (pass) passing.add(i);
            }
            if (passing.isEmpty()) continue;
            boolean[][] ok = new boolean[n.gpuCount()][];
            boolean[] idleMask = null;
            boolean uniform = true, any = false;
            for (int g = 0; g < n.gpuCount(); g++) {
                if (!n.isFullyFree(g) && !n.canShare(g)) continue;
                boolean[] m = new boolean[passing.size()];
                boolean fits = false;
                for (int i = 0; i < m.length; i++) {
                    int t = passing.get(i);
                    fits |= m[i] = GivenGpus.check(cycles.get(t), shareTypes.get(t).demand, n, new int[] {g}) == null;
                }
                if (!fits) continue;
                if (n.isFullyFree(g)) {
                    if (idleMask == null) idleMask = m;
                    else uniform &= Arrays.equals(idleMask, m);
                }
                ok[g] = m;
                any = true;
            }
            if (!any || !uniform) continue;
            String key = n.model().id() + "/" + n.memoryCapacityMib() + "/" + n.spec().splitCount() + "/" + passing + "/" + Arrays.toString(idleMask);
            members.computeIfAbsent(key, k -> new ArrayList<>()).add(n);
            passingOf.putIfAbsent(key, passing.stream().map(shareTypes::get).toList());
            allowed.put(n.id(), ok);
        }
        for (Map.Entry<String, List<NodeState>> e : members.entrySet()) {
            List<NodeShares> nodes = e.getValue().stream().map(NodeShares::new).toList();
            ShareGroup g = ShareGroup.build(model, nodes, passingOf.get(e.getKey()), allowed, patternLimit);
            if (g == null) continue;
            groups.add(g);
            for (NodeShares ns : nodes) {
                shares.put(ns.n.id(), ns);
                patterned.add(ns.n.id());
            }
        }
    }

    /** Where the type's replicas may go, as the engine's filters and GPU rule say, with bounded counts. */
    private void addSlots(JobType t) {
        CycleState cycle = new CycleState(cluster, t.spec, p.profile(), null);
        List<FilterPlugin> filters = PlacementPlugins.defaultFilters();
        int k = t.demand.gpus();
        long most = (long) t.jobs.length * t.replicas();
        for (NodeState n : cluster.nodes()) {
            boolean pass = true;
            for (FilterPlugin f : filters) pass &= f.filter(cycle, t.demand, n) == null;
            if (!pass) continue;
            if (t.share()) {
                if (patterned.contains(n.id())) continue;   // in a share group
                long fit = 0;   // how many of these shares the node's GPUs could take, one GPU at a time
                long mem = t.demand.memoryOn(n.model(), n.memoryCapacityMib());
                for (int g = 0; g < n.gpuCount(); g++) {
                    if (GivenGpus.check(cycle, t.demand, n, new int[] {g}) != null) continue;
                    fit += Math.min(n.spec().splitCount() - n.tasks(g), Math.min(n.freeMilli(g) / t.demand.milli(), n.freeMemoryMib(g) / Math.max(1, mem)));
                }
                if (fit == 0) continue;
                NodeShares ns = shares.computeIfAbsent(n.id(), x -> new NodeShares(n));
                Slot s = slot(t, n.id(), -1, Math.min(most, fit));
                ns.slots.add(s);
            } else if (t.inDomain()) {
                List<List<Integer>> domains = n.spec().nvlinkDomains();
                for (int d = 0; d < domains.size(); d++) {
                    int[] idle = idleIn(n, domains.get(d));
                    if (idle.length < k || GivenGpus.check(cycle, t.demand, n, Arrays.copyOf(idle, k)) != null) continue;
                    slot(t, n.id(), d, Math.min(most, idle.length / k));
                }
            } else {
                slot(t, n.id(), -1, Math.min(most, n.fullyFreeGpus() / k));
            }
        }
        if (t.replicas() > 1) {
            // gang spread (phase 2): a node the type uses at all
            Map<Integer, BoolVar> use = new LinkedHashMap<>();
            for (Slot s : t.slots) {
                BoolVar u = use.computeIfAbsent(s.node(), x -> model.newBoolVar("gang_node"));
                model.addLessOrEqual(s.count(), LinearExpr.term(u, s.max()));
            }
            gangNodeUse.addAll(use.values());
        }
    }

    private Slot slot(JobType t, int node, int domain, long max) {
        Slot s = new Slot(t, node, domain, model.newIntVar(0, max, t.spec.id() + "@" + node + "/" + domain), max);
        t.slots.add(s);
        return s;
    }

    /**
     * Sums over a node's GPUs for its shares: compute, memory, task slots, and for each share size m, how many
     * shares of at least m the GPUs can hold (each GPU holds at most its free compute / m of them). All hold for
     * any real packing; {@link SharePacking} decides the rest.
     */
    private void addShareCapacity(NodeShares ns) {
        NodeState n = ns.n;
        int split = n.spec().splitCount();
        LinearExprBuilder milli = LinearExpr.newBuilder();
        LinearExprBuilder mem = LinearExpr.newBuilder();
        LinearExprBuilder count = LinearExpr.newBuilder();
        long freeMilli = 0, freeMem = 0, freeTasks = 0;
        for (int g : ns.sharedGpus) {
            freeMilli += n.freeMilli(g);
            freeMem += n.freeMemoryMib(g);
            freeTasks += split - n.tasks(g);
        }
        for (Slot s : ns.slots) {
            milli.addTerm(s.count(), s.type().demand.milli());
            mem.addTerm(s.count(), s.type().demand.memoryOn(n.model(), n.memoryCapacityMib()));
            count.add(s.count());
        }
        milli.addTerm(ns.opened, -1000);
        mem.addTerm(ns.opened, -n.memoryCapacityMib());
        count.addTerm(ns.opened, -split);
        model.addLessOrEqual(milli, freeMilli);
        model.addLessOrEqual(mem, freeMem);
        model.addLessOrEqual(count, freeTasks);
        // packing bounds: for each weighting f of share sizes, the shares' total weight is at most what the GPUs
        // can hold at best (per GPU, the best total weight of shares fitting its free compute)
        for (PackingBounds.Weighting f : bounds.weightings()) {
            LinearExprBuilder lhs = LinearExpr.newBuilder();
            for (Slot s : ns.slots) lhs.addTerm(s.count(), f.of(s.type().demand.milli()));
            long room = 0;
            for (int g : ns.sharedGpus) room += f.capacity(n.freeMilli(g));
            lhs.addTerm(ns.opened, -f.capacity(GpuShare.WHOLE));
            model.addLessOrEqual(lhs, room);
        }
        // an idle GPU is opened only for shares that need it
        LinearExprBuilder any = LinearExpr.newBuilder();
        for (Slot s : ns.slots) any.add(s.count());
        model.addLessOrEqual(ns.opened, any);
    }

    /** Idle GPUs per node and per NVLink domain: whole replicas plus idle GPUs opened by shares. */
    private void addIdleGpuCapacity() {
        Map<Integer, List<Slot>> wholeByNode = new HashMap<>();
        for (JobType t : types) {
            if (t.share()) continue;
            for (Slot s : t.slots) wholeByNode.computeIfAbsent(s.node(), x -> new ArrayList<>()).add(s);
        }
        for (Map.Entry<Integer, List<Slot>> e : wholeByNode.entrySet()) {
            NodeState n = cluster.node(e.getKey());
            NodeShares ns = shares.get(n.id());
            LinearExprBuilder nodeUse = LinearExpr.newBuilder();
            List<List<Integer>> domains = n.spec().nvlinkDomains();
            Map<Integer, LinearExprBuilder> domainUse = new LinkedHashMap<>();
            for (Slot s : e.getValue()) {
                nodeUse.addTerm(s.count(), s.type().demand.gpus());
                if (s.domain() >= 0) domainUse.computeIfAbsent(s.domain(), d -> LinearExpr.newBuilder()).addTerm(s.count(), s.type().demand.gpus());
            }
            if (ns != null) {
                nodeUse.add(ns.opened);
                if (!domainUse.isEmpty()) splitOpenedByDomain(ns, domains, domainUse);
            }
            model.addLessOrEqual(nodeUse, n.fullyFreeGpus());
            for (Map.Entry<Integer, LinearExprBuilder> d : domainUse.entrySet()) {
                model.addLessOrEqual(d.getValue(), idleIn(n, domains.get(d.getKey())).length);
            }
        }
    }

    /** Where domain-bound replicas compete with shares: which domains the opened idle GPUs come from. */
    private void splitOpenedByDomain(NodeShares ns, List<List<Integer>> domains, Map<Integer, LinearExprBuilder> domainUse) {
        NodeState n = ns.n;
        LinearExprBuilder sum = LinearExpr.newBuilder();
        int outside = 0;
        for (int g : ns.idleGpus) if (n.domainOf(g) < 0) outside++;
        ns.openedOutsideDomains = model.newIntVar(0, outside, "opened_outside");
        sum.add(ns.openedOutsideDomains);
        for (int d = 0; d < domains.size(); d++) {
            IntVar o = model.newIntVar(0, idleIn(n, domains.get(d)).length, "opened_d" + d);
            ns.openedInDomain.put(d, o);
            sum.add(o);
            if (domainUse.containsKey(d)) domainUse.get(d).add(o);
        }
        model.addEquality(sum, ns.opened);
    }

    private static int[] idleIn(NodeState n, List<Integer> gpus) {
        return gpus.stream().filter(n::isFullyFree).mapToInt(Integer::intValue).toArray();
    }

    // ---- packing check -------------------------------------------------------------------------

    /** Where each node's shares go (bin per item, -1 = left out), and whether every share of the answer fits. */
    record Packing(Map<Integer, int[]> bins, boolean complete) {}

    /**
     * Packs every node's shares exactly. A node whose shares do not fit gets the cut "at least these shares
     * need more idle GPUs than this", and its shares are packed best-fit with the misfits left out, so the
     * answer can still be used (as a feasible, not optimal, one).
     */
    Packing pack(CpSolver solver) {
        Map<Integer, int[]> packed = new HashMap<>();
        boolean complete = true;
        for (NodeShares ns : shares.values()) {
            int idle = (int) solver.value(ns.opened);
            List<SharePacking.Item> items = ns.items(solver, idle);
            if (items.isEmpty()) continue;
            int[] bins = SharePacking.pack(items, ns.bins(idle));
            if (bins == null) {
                complete = false;
                cut(ns, solver, idle);
                bins = SharePacking.packPartly(items, ns.bins(idle));
            }
            packed.put(ns.n.id(), bins);
        }
        return new Packing(packed, complete);
    }

    private void cut(NodeShares ns, CpSolver solver, int idle) {
        cuts++;
        List<Literal> atLeast = new ArrayList<>();
        for (Slot s : ns.slots) {
            long c = solver.value(s.count());
            if (c == 0) continue;
            BoolVar b = model.newBoolVar("cut");
            model.addGreaterOrEqual(s.count(), c).onlyEnforceIf(b);
            model.addLessOrEqual(s.count(), c - 1).onlyEnforceIf(b.not());
            atLeast.add(b);
        }
        model.addGreaterOrEqual(ns.opened, idle + 1).onlyEnforceIf(atLeast.toArray(Literal[]::new));
    }
}
