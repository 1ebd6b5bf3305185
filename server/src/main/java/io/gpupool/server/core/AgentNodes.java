package io.gpupool.server.core;

import io.gpupool.agent.protocol.AccountIsolation;
import io.gpupool.store.NodeProgress;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Where each agent node stands in the agent protocol, owned by the engine loop: the version of its desired
 * state, the highest status seq applied from its agent, when it last reported (monotonic clock), its lease epoch,
 * whether it is ready (reporting) or lost, and its current credential. A node is schedulable only while ready:
 * after a server restart it waits for its agent's first report, and a node lost stays out of placement until its
 * agent reports again.
 */
final class AgentNodes {

    enum Condition {
        /** Registered, not reported since the server started. */
        WAITING,
        /** Its agent reports. */
        READY,
        /**
         * No report for the node-lost timeout: no new work, its lease epoch was raised. Its attempts are given up
         * (ended, their jobs requeued or failed) once the agent's kill grace and the margin have passed too.
         */
        LOST;

        String wire() { return name().toLowerCase(java.util.Locale.ROOT); }
    }

    static final class Node {
        final String name;
        long version;
        long ackedSeq;
        /** When ({@link ServiceClock#nanos}) a report of its agent was last applied (or the server started). */
        long lastSeenNanos;
        long leaseEpoch;
        /** Whether its agent runs jobs as their own accounts, and which it lacks, as it last said; null: not said yet. */
        AccountIsolation accounts;
        /** Its agent's SIGTERM-to-SIGKILL grace, as it last said. */
        long killGraceMs = AgentSettings.DEFAULT_KILL_GRACE_MS;
        /** What the node enforces on its jobs, as its agent last registered it (memory only: unknown after a server restart until the agent registers again). */
        io.gpupool.agent.protocol.NodeConfinement confinement;
        /** Lost, and its attempts given up: its jobs went back to the queue or failed. */
        boolean attemptsGivenUp;
        Condition condition = Condition.WAITING;
        String credentialId;
        /** Version or seq changed in this iteration: written at the flush. */
        boolean progressDirty;
        /** Completes (after the commit) when the desired state changes next: what a waiting report waits on. */
        CompletableFuture<Void> nextChange = new CompletableFuture<>();
        /** The version changed in this iteration: {@link #nextChange} completes after this iteration's commit. */
        boolean changed;

        Node(String name, long version, long ackedSeq, long leaseEpoch, long lastSeenNanos) {
            this.name = name;
            this.version = version;
            this.ackedSeq = ackedSeq;
            this.leaseEpoch = leaseEpoch;
            this.lastSeenNanos = lastSeenNanos;
        }

        NodeProgress progress() {
            return new NodeProgress(name, version, ackedSeq, leaseEpoch);
        }

        /** Milliseconds since its agent's last applied report. */
        long silentMs(long nowNanos) {
            return (nowNanos - lastSeenNanos) / 1_000_000;
        }
    }

    private final Map<String, Node> nodes = new LinkedHashMap<>();

    Node add(String name, long version, long ackedSeq, long leaseEpoch, long nowNanos) {
        Node n = new Node(name, version, ackedSeq, leaseEpoch, nowNanos);
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
