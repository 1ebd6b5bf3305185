package io.gpupool.engine.status;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The refusals of the nodes one placement visited, counted per reason (one reason = one message: per-node
 * messages carry no numbers, so nodes refused for the same cause count together). Each reason keeps the most
 * any of its nodes had free and the largest capacity among them.
 */
public final class NodeTally {
    private final Map<String, Entry> byMessage = new TreeMap<>();

    private static final class Entry {
        final Status first;
        int nodes;
        long free;
        long capacity;

        Entry(Status s) {
            first = s;
            free = s.free();
            capacity = s.capacity();
        }
    }

    /** Counts one node's refusal. */
    public void add(Status s) {
        Entry e = byMessage.computeIfAbsent(s.message(), k -> new Entry(s));
        e.nodes++;
        e.free = Math.max(e.free, s.free());
        e.capacity = Math.max(e.capacity, s.capacity());
    }

    public boolean isEmpty() {
        return byMessage.isEmpty();
    }

    /** The counts in message order. */
    public List<NodeCount> counts() {
        List<NodeCount> out = new ArrayList<>(byMessage.size());
        for (Entry e : byMessage.values()) {
            out.add(new NodeCount(e.first.withAmounts(e.first.requested(), e.free, e.capacity), e.nodes));
        }
        return out;
    }

    /** Of {@link #counts()}, the reason most nodes gave (the first in message order on a tie); null when no node refused. */
    public static NodeCount dominant(List<NodeCount> counts) {
        NodeCount best = null;
        for (NodeCount c : counts) if (best == null || c.nodes() > best.nodes()) best = c;
        return best;
    }

    /** "3 nodes insufficient free GPUs; 1 node cordoned" */
    public static String render(List<NodeCount> counts) {
        StringBuilder sb = new StringBuilder();
        for (NodeCount c : counts) {
            sb.append(sb.isEmpty() ? "" : "; ").append(c.nodes()).append(" node").append(c.nodes() == 1 ? "" : "s")
                    .append(' ').append(c.reason().message());
        }
        return sb.toString();
    }
}
