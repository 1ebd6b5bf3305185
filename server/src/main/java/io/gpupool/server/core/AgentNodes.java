package io.gpupool.server.core;

import io.gpupool.store.NodeProgress;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Where each agent node stands in the agent protocol, owned by the engine loop: the version of its desired
 * state, the highest status seq applied from its agent, when it last reported, whether it is ready (reporting)
 * or lost, and its current credential. A node is schedulable only while ready: after a server restart it waits
 * for its agent's first report, and a node lost stays out of placement until its agent reports again.
 */
final class AgentNodes {

    enum Condition {
        /** Registered, not reported since the server started. */
        WAITING,
        /** Its agent reports. */
        READY,
        /** No report for the node-lost timeout: its attempts were ended. */
        LOST;

        String wire() { return name().toLowerCase(java.util.Locale.ROOT); }
    }

    static final class Node {
        final String name;
        long version;
        long ackedSeq;
        long lastSeenMs;
        Condition condition = Condition.WAITING;
        String credentialId;
        /** Version or seq changed in this iteration: written at the flush. */
        boolean progressDirty;
        /** Completes (after the commit) when the desired state changes next: what a waiting report waits on. */
        CompletableFuture<Void> nextChange = new CompletableFuture<>();
        /** The version changed in this iteration: {@link #nextChange} completes after this iteration's commit. */
        boolean changed;

        Node(String name, long version, long ackedSeq, long lastSeenMs) {
            this.name = name;
            this.version = version;
            this.ackedSeq = ackedSeq;
            this.lastSeenMs = lastSeenMs;
        }

        NodeProgress progress() {
            return new NodeProgress(name, version, ackedSeq);
        }
    }

    private final Map<String, Node> nodes = new LinkedHashMap<>();

    Node add(String name, long version, long ackedSeq, long nowMs) {
        Node n = new Node(name, version, ackedSeq, nowMs);
        nodes.put(name, n);
        return n;
    }

    Node get(String name) {
        return nodes.get(name);
    }

    boolean isAgentNode(String name) {
        return nodes.containsKey(name);
    }

    Collection<Node> all() {
        return nodes.values();
    }

    /** The attempts placed on the node changed: a new desired-state version, sent to its agent. */
    void touch(String name) {
        Node n = nodes.get(name);
        if (n == null) return;
        n.version++;
        n.changed = true;
        n.progressDirty = true;
    }
}
