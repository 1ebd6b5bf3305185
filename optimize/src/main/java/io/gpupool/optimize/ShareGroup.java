package io.gpupool.optimize;

import com.google.ortools.sat.CpModel;
import com.google.ortools.sat.CpSolver;
import com.google.ortools.sat.IntVar;
import com.google.ortools.sat.LinearExpr;
import com.google.ortools.sat.LinearExprBuilder;
import io.gpupool.engine.state.NodeState;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The fractional shares of the CP-SAT model on a group of interchangeable nodes (same GPU model, same share
 * types passing the engine's filters), modelled exactly with fill patterns (Gilmore and Gomory's
 * cutting-stock columns, {@link SharePatterns}). The group's GPUs fall into classes of GPUs in the same state
 * (free compute, memory and task slots, and which share types the engine's GPU rule lets on): the GPUs
 * already shared, one class per state, and the idle GPUs, of which the model opens some per node. Each GPU
 * of a class takes one maximal pattern; the shares of each kind (size, and the classes allowing it) are at
 * most what the chosen patterns hold. That admits exactly the share sets that pack, so no packing check or
 * cut is needed, and the relaxation is the tight cutting-stock one.
 */
final class ShareGroup {
    /** Patterns per class beyond which a group is left, by default, to the per-node relaxation with packing cuts. */
    static final int PATTERN_LIMIT = 2000;

    /** GPUs in one state: where they are ({node, gpu}), their patterns (counts per kind) and how many take each. */
    record GpuClass(boolean idle, List<int[]> gpus, List<int[]> patterns, IntVar[] use) {}

    final List<CpSatModel.NodeShares> nodes;
    final List<GpuClass> classes = new ArrayList<>();
    /** Shares of each type placed in the group. */
    final Map<CpSatModel.JobType, IntVar> count = new LinkedHashMap<>();
    private final Map<CpSatModel.JobType, Integer> kindOf = new HashMap<>();
    private int kinds;

    /**
     * @param nodes     the group's nodes (their opened-GPU variables)
     * @param types     the share types that pass the filters on these nodes
     * @param allowed   for each node of the group and each GPU, which of {@code types} the GPU rule lets on
     *                  it (null for a GPU that takes no shares)
     * @return null when a class has more than {@code limit} patterns
     */
    static ShareGroup build(CpModel model, List<CpSatModel.NodeShares> nodes, List<CpSatModel.JobType> types, Map<Integer, boolean[][]> allowed, int limit) {
        // classes of GPUs in the same state; the idle GPUs of all nodes form one class (same model, same rule)
        Map<String, List<int[]>> byState = new LinkedHashMap<>();
        Map<String, boolean[]> maskOf = new HashMap<>();
        Map<String, long[]> roomOf = new HashMap<>();
        for (CpSatModel.NodeShares ns : nodes) {
            NodeState n = ns.n;
            boolean[][] ok = allowed.get(n.id());
            for (int g = 0; g < n.gpuCount(); g++) {
                if (ok[g] == null) continue;
                boolean idle = n.isFullyFree(g);
                String key = idle ? "idle" : n.freeMilli(g) + "/" + n.freeMemoryMib(g) + "/" + n.tasks(g) + "/" + Arrays.toString(ok[g]);
                byState.computeIfAbsent(key, k -> new ArrayList<>()).add(new int[] {n.id(), g});
                maskOf.putIfAbsent(key, ok[g]);
                roomOf.putIfAbsent(key, new long[] {n.freeMilli(g), n.freeMemoryMib(g), n.spec().splitCount() - n.tasks(g)});
            }
        }
        List<String> keys = new ArrayList<>(byState.keySet());
        // kinds: types that need the same of a GPU and are allowed on the same classes are interchangeable
        ShareGroup sg = new ShareGroup(nodes);
        Map<String, Integer> kindIndex = new LinkedHashMap<>();
        List<SharePatterns.Size> sizes = new ArrayList<>();
        List<Integer> most = new ArrayList<>();
        NodeState any = nodes.getFirst().n;
        for (int t = 0; t < types.size(); t++) {
            CpSatModel.JobType jt = types.get(t);
            long mem = jt.demand.memoryOn(any.model(), any.memoryCapacityMib());
            StringBuilder key = new StringBuilder(jt.demand.milli() + "/" + mem + "/");
            for (String c : keys) key.append(maskOf.get(c)[t] ? '1' : '0');
            int k = kindIndex.computeIfAbsent(key.toString(), x -> {
                sizes.add(new SharePatterns.Size(jt.demand.milli(), mem));
                most.add(0);
                return kindIndex.size();
            });
            most.set(k, most.get(k) + jt.jobs.length);
            sg.kindOf.put(jt, k);
        }
        int kinds = sizes.size();
        sg.kinds = kinds;
        // patterns per class, over the kinds allowed on it (all first: a group over the limit adds nothing)
        Map<String, List<int[]>> patternsOf = new LinkedHashMap<>();
        for (String c : keys) {
            boolean[] mask = maskOf.get(c);
            List<Integer> on = new ArrayList<>();
            for (int k = 0; k < kinds; k++) {
                for (int t = 0; t < types.size(); t++) if (sg.kindOf.get(types.get(t)) == k && mask[t]) { on.add(k); break; }
            }
            if (on.isEmpty()) continue;
            long[] r = roomOf.get(c);
            int[] mostOn = on.stream().mapToInt(most::get).toArray();
            List<int[]> local = SharePatterns.maximal((int) r[0], r[1], (int) r[2], on.stream().map(sizes::get).toList(), mostOn, limit);
            if (local == null) return null;
            List<int[]> patterns = new ArrayList<>();
            for (int[] lp : local) {
                if (Arrays.stream(lp).sum() == 0) continue;
                int[] full = new int[kinds];
                for (int i = 0; i < on.size(); i++) full[on.get(i)] = lp[i];
                patterns.add(full);
            }
            if (!patterns.isEmpty()) patternsOf.put(c, patterns);
        }
        LinearExprBuilder[] room = new LinearExprBuilder[kinds];
        for (int k = 0; k < kinds; k++) room[k] = LinearExpr.newBuilder();
        long[] capacity = new long[kinds];
        for (Map.Entry<String, List<int[]>> e : patternsOf.entrySet()) {
            List<int[]> gpus = byState.get(e.getKey());
            List<int[]> patterns = e.getValue();
            boolean idle = e.getKey().equals("idle");
            IntVar[] use = new IntVar[patterns.size()];
            LinearExprBuilder taken = LinearExpr.newBuilder();
            for (int i = 0; i < use.length; i++) {
                use[i] = model.newIntVar(0, gpus.size(), "pattern");
                taken.add(use[i]);
                for (int k = 0; k < kinds; k++) {
                    if (patterns.get(i)[k] == 0) continue;
                    room[k].addTerm(use[i], patterns.get(i)[k]);
                    capacity[k] += (long) patterns.get(i)[k] * gpus.size();
                }
            }
            if (idle) {
                // every idle GPU the shares open takes a pattern
                LinearExprBuilder opened = LinearExpr.newBuilder();
                for (CpSatModel.NodeShares ns : nodes) opened.add(ns.opened);
                model.addEquality(taken, opened);
            } else {
                model.addLessOrEqual(taken, gpus.size());
            }
            sg.classes.add(new GpuClass(idle, gpus, patterns, use));
        }
        if (sg.classes.stream().noneMatch(GpuClass::idle)) {
            for (CpSatModel.NodeShares ns : nodes) model.addEquality(ns.opened, 0);
        }
        // shares of each kind: at most what the patterns hold
        LinearExprBuilder[] placed = new LinearExprBuilder[kinds];
        for (int k = 0; k < kinds; k++) placed[k] = LinearExpr.newBuilder();
        for (CpSatModel.JobType jt : types) {
            int k = sg.kindOf.get(jt);
            IntVar z = model.newIntVar(0, Math.min(jt.jobs.length, capacity[k]), "shares_" + jt.spec.id());
            sg.count.put(jt, z);
            placed[k].add(z);
        }
        for (int k = 0; k < kinds; k++) model.addLessOrEqual(placed[k], room[k]);
        return sg;
    }

    private ShareGroup(List<CpSatModel.NodeShares> nodes) {
        this.nodes = nodes;
    }

    /** The class of each GPU that takes shares, by {@link #key}. */
    private Map<Long, GpuClass> classOfGpu() {
        Map<Long, GpuClass> out = new HashMap<>();
        for (GpuClass c : classes) for (int[] g : c.gpus()) out.put(key(g[0], g[1]), c);
        return out;
    }

    private static long key(int node, int gpu) {
        return (long) node << 20 | gpu;
    }

    /**
     * Hints from a known placement: the shares of each type here, and for each GPU that holds some, the first
     * pattern that covers them. {@code sharesOnGpu} gives the types of the shares on each GPU ({node, gpu}).
     */
    void hint(CpModel model, Map<CpSatModel.JobType, List<int[]>> sharesOnGpu) {
        Map<Long, GpuClass> classOf = classOfGpu();
        Map<Long, int[]> held = new HashMap<>();
        for (Map.Entry<CpSatModel.JobType, IntVar> e : count.entrySet()) {
            List<int[]> on = sharesOnGpu.getOrDefault(e.getKey(), List.of());
            long here = 0;
            for (int[] g : on) {
                if (!classOf.containsKey(key(g[0], g[1]))) continue;
                here++;
                held.computeIfAbsent(key(g[0], g[1]), x -> new int[kinds])[kindOf.get(e.getKey())]++;
            }
            model.addHint(e.getValue(), here);
        }
        Map<IntVar, Long> uses = new HashMap<>();
        for (Map.Entry<Long, int[]> e : held.entrySet()) {
            GpuClass c = classOf.get(e.getKey());
            for (int i = 0; i < c.patterns().size(); i++) {
                if (SharePatterns.covers(c.patterns().get(i), e.getValue())) {
                    uses.merge(c.use()[i], 1L, Long::sum);
                    break;
                }
            }
        }
        for (GpuClass c : classes) for (IntVar u : c.use()) model.addHint(u, uses.getOrDefault(u, 0L));
    }

    /**
     * The GPU ({node, gpu}) of every share the answer places here, per type: each class's GPUs take the chosen
     * patterns in turn (the idle class: the GPUs {@code openedGpus} lists, the ones the model opened), and the
     * shares of each kind fill the pattern places of that kind.
     */
    Map<CpSatModel.JobType, List<int[]>> decode(CpSolver solver, List<int[]> openedGpus) {
        List<List<int[]>> places = new ArrayList<>();
        for (int k = 0; k < kinds; k++) places.add(new ArrayList<>());
        for (GpuClass c : classes) {
            List<int[]> gpus = c.idle() ? openedGpus : c.gpus();
            int next = 0;
            for (int i = 0; i < c.patterns().size(); i++) {
                long n = solver.value(c.use()[i]);
                for (long u = 0; u < n && next < gpus.size(); u++, next++) {
                    int[] pattern = c.patterns().get(i);
                    for (int k = 0; k < kinds; k++) for (int r = 0; r < pattern[k]; r++) places.get(k).add(gpus.get(next));
                }
            }
        }
        int[] taken = new int[kinds];
        Map<CpSatModel.JobType, List<int[]>> out = new LinkedHashMap<>();
        for (Map.Entry<CpSatModel.JobType, IntVar> e : count.entrySet()) {
            int k = kindOf.get(e.getKey());
            long n = solver.value(e.getValue());
            List<int[]> mine = new ArrayList<>();
            for (long i = 0; i < n; i++) mine.add(places.get(k).get(taken[k]++));
            out.put(e.getKey(), mine);
        }
        return out;
    }
}
