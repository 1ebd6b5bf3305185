package io.gpupool.engine.batch;

import io.gpupool.engine.state.Allocation;
import io.gpupool.engine.state.ClusterState;
import io.gpupool.engine.state.GpuGrant;
import io.gpupool.engine.state.NodeState;
import io.gpupool.model.JobSpec;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Turns a re-pack answer into one that moves as few running shares as it can without changing what it
 * achieves. A placer answers in GPU contents (which shares share a GPU); which idle GPU takes a content, and
 * which of several alike shares fills a place, are free choices it makes blindly, so a re-pack that changes
 * nothing could still move every share. Here each GPU content of the answer goes, where it can, to a GPU of
 * the same kind (model, memory, task slots) that held the same shares before, else the one that held most of
 * them, else where the answer put it; then in each content the shares that were on that GPU keep their place,
 * the other running shares of the same kind fill the rest, and newly placed jobs last. Contents stay on GPUs
 * idle in the re-pack's state and off the GPUs that whole-GPU jobs of the answer take, so the answer stays
 * one the cluster can hold; the caller still binds it through the engine's rules. A newly placed one-GPU whole
 * job of the answer takes whichever idle GPU of its kind is left once the contents have theirs, so that it does
 * not push a content off the GPU it held.
 */
public final class FewestMoves {
    private FewestMoves() {}

    /** A GPU-share job of one replica on one GPU: what a re-pack may move. */
    public static boolean movable(JobSpec s) {
        return !s.cpuOnly() && !s.share().isWhole() && s.shape().replicas() == 1 && s.shape().gpusPerReplica() == 1;
    }

    /**
     * @param cluster the cluster as the answer was made for (the re-packed shares taken off)
     * @param specs   every job of the answer, by id
     * @param answer  the placer's answer
     * @param before  where the running shares were (job id -> allocation)
     * @return the answer with the same GPU contents, placed and filled to keep shares where they were
     */
    public static Map<String, Allocation> relabel(ClusterState cluster, Map<String, JobSpec> specs, Map<String, Allocation> answer,
                                                  Map<String, Allocation> before) {
        Map<String, Allocation> out = new LinkedHashMap<>();
        Set<Long> taken = new HashSet<>();                        // GPUs whole-GPU jobs (or unmoved contents) of the answer hold
        Map<Long, List<String>> content = new LinkedHashMap<>();  // idle GPU -> the shares the answer puts on it
        Map<String, Long> wholes = new LinkedHashMap<>();          // newly placed one-GPU whole jobs -> the idle GPU the answer gives them
        for (Map.Entry<String, Allocation> e : answer.entrySet()) {
            JobSpec s = specs.get(e.getKey());
            GpuGrant g = e.getValue().grants().isEmpty() ? null : e.getValue().grants().getFirst();
            if (s != null && movable(s) && g != null && cluster.node(g.node()).isFullyFree(g.gpu())) {
                content.computeIfAbsent(key(g.node(), g.gpu()), k -> new ArrayList<>()).add(e.getKey());
            } else if (s != null && !before.containsKey(e.getKey()) && e.getValue().grants().size() == 1 && g.exclusive()
                    && cluster.node(g.node()).isFullyFree(g.gpu())) {
                // any idle GPU of the same kind serves it as well: it goes where no content wants to stay
                wholes.put(e.getKey(), key(g.node(), g.gpu()));
            } else {
                for (GpuGrant x : e.getValue().grants()) taken.add(key(x.node(), x.gpu()));
            }
        }
        // what each idle GPU held before, by kind of share
        Map<Long, Map<String, Integer>> held = new HashMap<>();
        Map<String, List<Long>> holdersOfKind = new HashMap<>();   // GPU kind + share kind -> GPUs that held one
        for (Map.Entry<String, Allocation> e : before.entrySet()) {
            GpuGrant g = e.getValue().grants().getFirst();
            long at = key(g.node(), g.gpu());
            if (taken.contains(at) || !cluster.node(g.node()).isFullyFree(g.gpu())) continue;
            String kind = shareKind(specs.get(e.getKey()));
            if (held.computeIfAbsent(at, k -> new TreeMap<>()).merge(kind, 1, Integer::sum) == 1) {
                holdersOfKind.computeIfAbsent(gpuKind(cluster, at) + "|" + kind, k -> new ArrayList<>()).add(at);
            }
        }
        Map<String, List<Long>> exactly = new HashMap<>();   // GPU kind + content -> GPUs that held exactly that
        for (Map.Entry<Long, Map<String, Integer>> e : held.entrySet()) {
            exactly.computeIfAbsent(gpuKind(cluster, e.getKey()) + "|" + e.getValue(), k -> new ArrayList<>()).add(e.getKey());
        }
        // where each content goes: the same content's old GPU, the GPU that held most of it, else the answer's GPU
        List<Long> order = new ArrayList<>(content.keySet());
        order.sort(Comparator.comparingInt((Long gpu) -> -content.get(gpu).size()).thenComparingLong(gpu -> gpu));
        Map<Long, Long> target = new HashMap<>();
        Set<Long> used = new HashSet<>(taken);
        List<Long> unplaced = new ArrayList<>();
        for (Long from : order) {
            Map<String, Integer> want = counts(content.get(from), specs);
            String kind = gpuKind(cluster, from);
            Long to = null;
            for (Long g : exactly.getOrDefault(kind + "|" + new TreeMap<>(want), List.of())) if (!used.contains(g)) { to = g; break; }
            if (to == null) {
                int best = 0;
                for (String k : want.keySet()) {
                    for (Long g : holdersOfKind.getOrDefault(kind + "|" + k, List.of())) {
                        if (used.contains(g)) continue;
                        int overlap = 0;
                        for (Map.Entry<String, Integer> w : want.entrySet()) overlap += Math.min(w.getValue(), held.get(g).getOrDefault(w.getKey(), 0));
                        if (overlap > best || (overlap == best && to != null && g < to)) { best = overlap; to = g; }
                    }
                }
            }
            if (to == null) { unplaced.add(from); continue; }
            target.put(from, to);
            used.add(to);
        }
        // the rest: the answer's own GPU if still free, else any free idle GPU of the same kind
        SpareGpus spare = new SpareGpus(cluster, used);
        for (Long from : unplaced) {
            Long to = spare.ownOrLike(from);
            if (to == null) return answer;   // an answer that gives one GPU twice: the engine's binding refuses it
            target.put(from, to);
        }
        // the whole-GPU jobs: their own GPU if no content took it, else a free idle GPU of the same kind
        Map<String, Long> wholeAt = new HashMap<>();
        for (Map.Entry<String, Long> w : wholes.entrySet()) {
            Long to = spare.ownOrLike(w.getValue());
            if (to == null) return answer;
            wholeAt.put(w.getKey(), to);
        }
        // fill each content: shares that were on its GPU stay, other running shares of the kind next, new jobs last
        Set<String> inContents = new HashSet<>();
        Map<String, java.util.ArrayDeque<String>> runningByKind = new HashMap<>();
        Map<String, java.util.ArrayDeque<String>> newByKind = new HashMap<>();
        Map<Long, List<String>> wasOn = new HashMap<>();   // GPU -> the running shares of the answer that were on it
        for (List<String> ids : content.values()) {
            for (String id : ids) {
                inContents.add(id);
                (before.containsKey(id) ? runningByKind : newByKind).computeIfAbsent(shareKind(specs.get(id)), k -> new java.util.ArrayDeque<>()).add(id);
                if (before.containsKey(id)) {
                    GpuGrant was = before.get(id).grants().getFirst();
                    wasOn.computeIfAbsent(key(was.node(), was.gpu()), k -> new ArrayList<>()).add(id);
                }
            }
        }
        Set<String> assigned = new HashSet<>();
        Map<Long, List<String>> open = new LinkedHashMap<>();     // target GPU -> kinds of its places not yet filled
        Map<Long, List<String>> filled = new LinkedHashMap<>();
        for (Long from : order) {
            long gpu = target.get(from);
            List<String> places = new ArrayList<>();
            for (String id : content.get(from)) places.add(shareKind(specs.get(id)));
            List<String> ids = new ArrayList<>();
            for (String id : wasOn.getOrDefault(gpu, List.of())) {
                if (places.remove(shareKind(specs.get(id)))) {
                    assigned.add(id);
                    ids.add(id);
                }
            }
            open.put(gpu, places);
            filled.put(gpu, ids);
        }
        for (Map<String, java.util.ArrayDeque<String>> pool : List.of(runningByKind, newByKind)) {
            for (Map.Entry<Long, List<String>> e : open.entrySet()) {
                for (java.util.Iterator<String> it = e.getValue().iterator(); it.hasNext(); ) {
                    java.util.ArrayDeque<String> q = pool.getOrDefault(it.next(), new java.util.ArrayDeque<>());
                    while (!q.isEmpty() && assigned.contains(q.peekFirst())) q.pollFirst();
                    if (q.isEmpty()) continue;
                    String id = q.pollFirst();
                    assigned.add(id);
                    filled.get(e.getKey()).add(id);
                    it.remove();
                }
            }
        }
        for (Map.Entry<String, Allocation> e : answer.entrySet()) {
            if (inContents.contains(e.getKey())) continue;
            Long at = wholeAt.get(e.getKey());
            if (at == null) {
                out.put(e.getKey(), e.getValue());
            } else {
                GpuGrant g = e.getValue().grants().getFirst();
                out.put(e.getKey(), new Allocation(e.getKey(), List.of(List.of(new GpuGrant((int) (at >>> 20), (int) (at & 0xFFFFF), g.milli(), g.memoryMib(), true)))));
            }
        }
        for (Map.Entry<Long, List<String>> e : filled.entrySet()) {
            int node = (int) (e.getKey() >>> 20), gpu = (int) (e.getKey() & 0xFFFFF);
            for (String id : e.getValue()) out.put(id, new Allocation(id, List.of(List.of(new GpuGrant(node, gpu, 0, 0, false)))));
        }
        return out;
    }

    /**
     * The jobs of {@code shares} (job id -> allocation, one GPU each) on the {@code gpus} GPUs among theirs with the
     * most free compute, in the given order: where a re-pack can gain most for the fewest moves.
     */
    public static List<String> onMostStranded(ClusterState cluster, Map<String, Allocation> shares, int gpus) {
        Map<Long, List<String>> byGpu = new LinkedHashMap<>();
        for (Map.Entry<String, Allocation> e : shares.entrySet()) {
            GpuGrant g = e.getValue().grants().getFirst();
            byGpu.computeIfAbsent(key(g.node(), g.gpu()), k -> new ArrayList<>()).add(e.getKey());
        }
        List<Long> order = new ArrayList<>(byGpu.keySet());
        order.sort(Comparator.comparingInt((Long k) -> -cluster.node((int) (k >>> 20)).freeMilli((int) (k & 0xFFFFF))).thenComparingLong(k -> k));
        Set<String> chosen = new HashSet<>();
        for (Long k : order.subList(0, Math.min(gpus, order.size()))) chosen.addAll(byGpu.get(k));
        return shares.keySet().stream().filter(chosen::contains).toList();
    }

    /** How many running shares the new placement puts on another GPU than before. */
    public static int moves(Map<String, Allocation> before, Map<String, Allocation> after) {
        int moved = 0;
        for (Map.Entry<String, Allocation> e : before.entrySet()) {
            Allocation a = after.get(e.getKey());
            if (a == null || !gpus(a).equals(gpus(e.getValue()))) moved++;
        }
        return moved;
    }

    private static Set<Long> gpus(Allocation a) {
        Set<Long> out = new HashSet<>();
        for (GpuGrant g : a.grants()) out.add(key(g.node(), g.gpu()));
        return out;
    }

    private static Map<String, Integer> counts(List<String> ids, Map<String, JobSpec> specs) {
        Map<String, Integer> out = new TreeMap<>();
        for (String id : ids) out.merge(shareKind(specs.get(id)), 1, Integer::sum);
        return out;
    }

    /** The GPUs a content or a whole job may take: its own while free, else a free idle one of the same kind. */
    private static final class SpareGpus {
        private final ClusterState cluster;
        private final Set<Long> used;
        private Map<String, List<Long>> idleByKind;   // listed on first need, lowest GPU last

        SpareGpus(ClusterState cluster, Set<Long> used) {
            this.cluster = cluster;
            this.used = used;
        }

        /** {@code own} if no one uses it, else the lowest free idle GPU of its kind; marked used; null when none is left. */
        Long ownOrLike(long own) {
            Long to = used.contains(own) ? null : own;
            if (to == null) {
                if (idleByKind == null) idleByKind = idleByKind();
                List<Long> free = idleByKind.getOrDefault(gpuKind(cluster, own), List.of());
                while (!free.isEmpty() && used.contains(free.getLast())) free.removeLast();
                if (free.isEmpty()) return null;
                to = free.removeLast();
            }
            used.add(to);
            return to;
        }

        private Map<String, List<Long>> idleByKind() {
            Map<String, List<Long>> out = new HashMap<>();
            for (NodeState n : cluster.nodes()) {
                for (int g = 0; g < n.gpuCount(); g++) {
                    long k = key(n.id(), g);
                    if (n.isFullyFree(g) && n.healthy(g) && !n.cordoned() && !used.contains(k)) out.computeIfAbsent(gpuKind(cluster, k), x -> new ArrayList<>()).add(k);
                }
            }
            for (List<Long> l : out.values()) l.sort(Comparator.reverseOrder());   // taken from the end: lowest first
            return out;
        }
    }

    /** Shares of one kind need the same of a GPU and may go on the same GPUs: interchangeable. */
    private static String shareKind(JobSpec s) {
        return s.share().milli() + "/" + s.share().memoryMib() + "/" + new java.util.TreeSet<>(s.allowedModels());
    }

    /** GPUs of one kind take the same contents (the node's filters aside, which the caller's binding checks). */
    private static String gpuKind(ClusterState cluster, long gpu) {
        NodeState n = cluster.node((int) (gpu >>> 20));
        return n.model().id() + "/" + n.memoryCapacityMib() + "/" + n.spec().splitCount();
    }

    private static long key(int node, int gpu) {
        return (long) node << 20 | gpu;
    }
}
