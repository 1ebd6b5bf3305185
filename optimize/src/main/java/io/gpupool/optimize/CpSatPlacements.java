package io.gpupool.optimize;

import com.google.ortools.sat.CpSolver;
import com.google.ortools.sat.IntVar;
import io.gpupool.engine.state.Allocation;
import io.gpupool.engine.state.GpuGrant;
import io.gpupool.engine.state.NodeState;
import io.gpupool.model.JobSpec;
import io.gpupool.optimize.CpSatModel.JobType;
import io.gpupool.optimize.CpSatModel.NodeShares;
import io.gpupool.optimize.CpSatModel.Packing;
import io.gpupool.optimize.CpSatModel.Slot;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Placements in the terms of a {@link CpSatModel} and back: a known placement (e.g. greedy's) as hints for the
 * model's variables, and the solver's answer as allocations. The model holds what is searched; this class only
 * translates, so the order in which it hands out GPUs is the one thing it decides.
 */
final class CpSatPlacements {
    private CpSatPlacements() {}

    /** Suggests a known placement (e.g. greedy's) as the starting solution. */
    static void hint(CpSatModel m, Map<String, Allocation> placement) {
        Map<Slot, Long> counts = new HashMap<>();
        Map<Integer, Set<Integer>> openedGpus = new HashMap<>();
        Map<JobType, List<int[]>> sharesOnGpu = new HashMap<>();
        for (JobType t : m.types) {
            int placed = 0;
            for (int j : t.jobs) {
                Allocation a = placement.get(m.p.job(j).id());
                if (a == null) continue;
                placed++;
                for (List<GpuGrant> rep : a.replicas()) {
                    GpuGrant first = rep.getFirst();
                    NodeState n = m.cluster.node(first.node());
                    int domain = t.inDomain() ? n.domainOf(first.gpu()) : -1;
                    for (Slot s : t.slots) if (s.node() == first.node() && s.domain() == domain) counts.merge(s, 1L, Long::sum);
                    if (t.share()) sharesOnGpu.computeIfAbsent(t, x -> new ArrayList<>()).add(new int[] {n.id(), first.gpu()});
                    if (t.share() && n.isFullyFree(first.gpu())) openedGpus.computeIfAbsent(n.id(), x -> new HashSet<>()).add(first.gpu());
                }
            }
            for (int i = 0; i < t.jobs.length; i++) m.model.addHint(t.run[i], i < placed);
            for (Slot s : t.slots) m.model.addHint(s.count(), counts.getOrDefault(s, 0L));
        }
        for (ShareGroup g : m.groups) g.hint(m.model, sharesOnGpu);
        for (NodeShares ns : m.shares.values()) {
            Set<Integer> used = openedGpus.getOrDefault(ns.n.id(), Set.of());
            m.model.addHint(ns.opened, used.size());
            if (ns.openedOutsideDomains != null) {
                m.model.addHint(ns.openedOutsideDomains, used.stream().filter(g -> ns.n.domainOf(g) < 0).count());
                for (Map.Entry<Integer, IntVar> d : ns.openedInDomain.entrySet()) {
                    m.model.addHint(d.getValue(), used.stream().filter(g -> ns.n.domainOf(g) == d.getKey()).count());
                }
            }
        }
    }


    /**
     * The answer as allocations (nodes and GPUs; the engine fills in compute and memory): shares on the GPUs
     * the packing chose, opened idle GPUs taken outside NVLink domains first (or from the domains the model
     * chose), then domain-bound replicas, then the other replicas on the idle GPUs left; the placed jobs of a
     * type take its replicas node by node, so a gang stays together where the counts allow.
     */
    static Map<String, Allocation> decode(CpSatModel m, CpSolver solver, Packing packing) {
        Map<Integer, boolean[]> taken = new HashMap<>();
        Map<JobType, List<List<GpuGrant>>> replicas = new LinkedHashMap<>();
        for (NodeShares ns : m.shares.values()) {
            int[] bins = packing.bins().get(ns.n.id());
            if (bins == null) continue;
            NodeState n = ns.n;
            boolean[] used = taken.computeIfAbsent(n.id(), x -> new boolean[n.gpuCount()]);
            int idle = (int) solver.value(ns.opened);
            int[] idleChosen = chooseIdle(ns, solver, idle, used);
            int item = 0;
            for (Slot s : ns.slots) {
                long c = solver.value(s.count());
                for (long i = 0; i < c; i++, item++) {
                    int b = bins[item];
                    if (b < 0) continue;   // left out: the share did not pack
                    int gpu = b < ns.sharedGpus.length ? ns.sharedGpus[b] : idleChosen[b - ns.sharedGpus.length];
                    replicas.computeIfAbsent(s.type(), x -> new ArrayList<>()).add(List.of(new GpuGrant(n.id(), gpu, 0, 0, false)));
                }
            }
        }
        for (ShareGroup g : m.groups) {
            List<int[]> opened = new ArrayList<>();
            for (NodeShares ns : g.nodes) {
                boolean[] used = taken.computeIfAbsent(ns.n.id(), x -> new boolean[ns.n.gpuCount()]);
                for (int gpu : chooseIdle(ns, solver, (int) solver.value(ns.opened), used)) opened.add(new int[] {ns.n.id(), gpu});
            }
            for (Map.Entry<JobType, List<int[]>> e : g.decode(solver, opened).entrySet()) {
                for (int[] at : e.getValue()) replicas.computeIfAbsent(e.getKey(), x -> new ArrayList<>()).add(List.of(new GpuGrant(at[0], at[1], 0, 0, false)));
            }
        }
        for (boolean domainPass : new boolean[] {true, false}) {
            for (JobType t : m.types) {
                if (t.share() || t.inDomain() != domainPass) continue;
                for (Slot s : t.slots) {
                    long c = solver.value(s.count());
                    NodeState n = m.cluster.node(s.node());
                    boolean[] used = taken.computeIfAbsent(s.node(), x -> new boolean[n.gpuCount()]);
                    for (long i = 0; i < c; i++) {
                        replicas.computeIfAbsent(t, x -> new ArrayList<>()).add(takeIdle(n, used, t.demand.gpus(), s.domain()));
                    }
                }
            }
        }
        Map<String, Allocation> byId = new HashMap<>();
        for (JobType t : m.types) {
            List<List<GpuGrant>> reps = replicas.getOrDefault(t, List.of());
            int next = 0;
            for (int i = 0; i < t.jobs.length && solver.booleanValue(t.run[i]) && next + t.replicas() <= reps.size(); i++) {
                String id = m.p.job(t.jobs[i]).id();
                byId.put(id, new Allocation(id, reps.subList(next, next + t.replicas())));
                next += t.replicas();
            }
        }
        Map<String, Allocation> ordered = new LinkedHashMap<>();
        for (JobSpec s : m.p.jobs()) if (byId.containsKey(s.id())) ordered.put(s.id(), byId.get(s.id()));
        return ordered;
    }

    /** The idle GPUs shares open: from the domains the model chose, else outside NVLink domains first. */
    private static int[] chooseIdle(NodeShares ns, CpSolver solver, int count, boolean[] used) {
        NodeState n = ns.n;
        List<Integer> out = new ArrayList<>();
        if (ns.openedOutsideDomains != null) {
            int outside = (int) solver.value(ns.openedOutsideDomains);
            for (int g : ns.idleGpus) if (n.domainOf(g) < 0 && outside > 0) { out.add(g); outside--; }
            for (Map.Entry<Integer, IntVar> d : ns.openedInDomain.entrySet()) {
                int want = (int) solver.value(d.getValue());
                for (int g : ns.idleGpus) if (n.domainOf(g) == d.getKey() && want > 0) { out.add(g); want--; }
            }
        } else {
            List<Integer> order = new ArrayList<>();
            for (int g : ns.idleGpus) order.add(g);
            order.sort(Comparator.comparingInt((Integer g) -> n.domainOf(g) < 0 ? 0 : 1).thenComparingInt(g -> g));
            out.addAll(order.subList(0, count));
        }
        for (int g : out) used[g] = true;
        return out.stream().mapToInt(Integer::intValue).toArray();
    }

    /**
     * k idle GPUs of the node not handed out yet: from the given NVLink domain; otherwise from the smallest
     * group (domain, or a GPU without NVLink) that holds all k, else from the largest groups first.
     */
    private static List<GpuGrant> takeIdle(NodeState n, boolean[] used, int k, int domain) {
        Map<Integer, List<Integer>> groups = new LinkedHashMap<>();
        for (int g = 0; g < n.gpuCount(); g++) {
            if (used[g] || !n.isFullyFree(g) || (domain >= 0 && n.domainOf(g) != domain)) continue;
            groups.computeIfAbsent(n.domainOf(g) >= 0 ? n.domainOf(g) : -1 - g, x -> new ArrayList<>()).add(g);
        }
        List<List<Integer>> order = new ArrayList<>(groups.values());
        List<List<Integer>> holding = order.stream().filter(l -> l.size() >= k).toList();
        if (!holding.isEmpty()) order = List.of(holding.stream().min(Comparator.comparingInt(List::size)).orElseThrow());
        else order.sort(Comparator.comparingInt((List<Integer> l) -> -l.size()));
        List<GpuGrant> out = new ArrayList<>(k);
        for (List<Integer> grp : order) {
            for (int g : grp) {
                if (out.size() == k) break;
                used[g] = true;
                out.add(new GpuGrant(n.id(), g, 0, 0, true));
            }
        }
        if (out.size() < k) throw new IllegalStateException("CP-SAT answer over-uses node " + n.name());
        return out;
    }
}
