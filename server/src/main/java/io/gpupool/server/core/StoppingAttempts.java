package io.gpupool.server.core;

import io.gpupool.agent.protocol.RunningJobInfo;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Attempts the server gave up (preempted, drained, requeued after a lost run or a restart) whose processes may
 * still run on their nodes. While a job has one, it starts no new attempt: the engine holds it. That is what keeps
 * a job from running twice at once, by cause and effect rather than by timers: a node confirms an attempt gone when
 * its agent reports
 * <ul>
 *   <li>the attempt's end (its processes are gone when the agent records an end), or</li>
 *   <li>that it applied a desired state at least as new as the one the release produced (which no longer lists the
 *       attempt, and an agent never applies an older one) and does not list the attempt among its running ones.</li>
 * </ul>
 * The one exception is a node that cannot report: once it is declared lost, its attempts count as gone when the
 * node's lease has run out and the agent's kill grace and the server's margin have passed ({@link #nodeGone}).
 * Owned by the engine loop.
 */
final class StoppingAttempts {

    /** What node {@code node} must confirm about job {@code job}: attempt {@code attempt} gone, as of desired version {@code version}. */
    private record Wait(int attempt, long version) {}

    private final Map<String, Map<String, Wait>> byNode = new HashMap<>();
    private final Map<String, Set<String>> nodesByJob = new HashMap<>();

    /** Attempt {@code attempt} of {@code job} was released from {@code node}, whose desired state is now at {@code version}. */
    void add(String job, int attempt, String node, long version) {
        byNode.computeIfAbsent(node, k -> new LinkedHashMap<>()).put(job, new Wait(attempt, version));
        nodesByJob.computeIfAbsent(job, k -> new TreeSet<>()).add(node);
    }

    boolean waiting(String job) {
        return nodesByJob.containsKey(job);
    }

    /** Why the job waits, e.g. "attempt 2 is still stopping on node a100-1". */
    String reason(String job) {
        Set<String> nodes = nodesByJob.get(job);
        if (nodes == null) return null;
        int attempt = byNode.get(nodes.iterator().next()).get(job).attempt();
        return "attempt " + attempt + " is still stopping on node" + (nodes.size() > 1 ? "s " : " ") + String.join(", ", nodes)
                + " (a job never runs twice at once)";
    }

    /**
     * A report from {@code node}: desired version {@code applied} applied, {@code running} running there.
     *
     * @return the jobs that now wait on no node any more
     */
    List<String> reported(String node, long applied, Collection<RunningJobInfo> running) {
        Map<String, Wait> waits = byNode.get(node);
        if (waits == null) return List.of();
        List<String> gone = new ArrayList<>();
        for (Map.Entry<String, Wait> e : waits.entrySet()) {
            Wait w = e.getValue();
            if (applied >= w.version() && running.stream().noneMatch(r -> r.jobId().equals(e.getKey()) && r.attempt() == w.attempt())) {
                gone.add(e.getKey());
            }
        }
        List<String> free = new ArrayList<>();
        for (String job : gone) if (confirm(node, job)) free.add(job);
        return free;
    }

    /** The agent of {@code node} reported the end of this attempt. @return the job if it now waits on no node */
    List<String> ended(String node, String job, int attempt) {
        Map<String, Wait> waits = byNode.get(node);
        Wait w = waits == null ? null : waits.get(job);
        if (w == null || w.attempt() != attempt) return List.of();
        return confirm(node, job) ? List.of(job) : List.of();
    }

    /** The node is lost and its lease, the kill grace and the margin have run out: nothing of it runs any more. */
    List<String> nodeGone(String node) {
        Map<String, Wait> waits = byNode.get(node);
        if (waits == null) return List.of();
        List<String> free = new ArrayList<>();
        for (String job : List.copyOf(waits.keySet())) if (confirm(node, job)) free.add(job);
        return free;
    }

    /** The job ended (cancelled while it waited): nothing to wait for. */
    void forget(String job) {
        Set<String> nodes = nodesByJob.remove(job);
        if (nodes == null) return;
        for (String node : nodes) {
            Map<String, Wait> waits = byNode.get(node);
            waits.remove(job);
            if (waits.isEmpty()) byNode.remove(node);
        }
    }

    /** How many (job, node) confirmations are outstanding (metrics, tests). */
    int size() {
        return byNode.values().stream().mapToInt(Map::size).sum();
    }

    /** @return true if the job now waits on no node */
    private boolean confirm(String node, String job) {
        Map<String, Wait> waits = byNode.get(node);
        waits.remove(job);
        if (waits.isEmpty()) byNode.remove(node);
        Set<String> nodes = nodesByJob.get(job);
        nodes.remove(node);
        if (!nodes.isEmpty()) return false;
        nodesByJob.remove(job);
        return true;
    }
}
