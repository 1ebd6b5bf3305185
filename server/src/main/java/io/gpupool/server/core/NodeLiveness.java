package io.gpupool.server.core;

import io.gpupool.store.AttemptUpdate;
import io.gpupool.store.Write;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;

/**
 * Whether each agent's node is alive, on the monotonic clock. A report applied renews it; a node silent for the
 * node-lost timeout is lost (no new work, a new lease epoch), and once its agent's kill grace and the margin have run
 * out too its attempts are given up: requeued or failed by their jobs' restart policy. Loop thread only.
 */
final class NodeLiveness {
    private static final Logger LOG = LoggerFactory.getLogger(NodeLiveness.class);

    private final PoolState pool;
    private final JobLifecycle jobs;
    private final AgentSettings settings;

    NodeLiveness(PoolState pool, JobLifecycle jobs, AgentSettings settings) {
        this.pool = pool;
        this.jobs = jobs;
        this.settings = settings;
    }

    /**
     * A report of the node's agent was applied: it is alive. A waiting or lost node is ready again (and schedulable
     * unless cordoned); a lost one whose attempts were not given up yet keeps them.
     *
     * @param killGraceMs the agent's kill grace as it says (0: not said)
     */
    void seen(AgentNodes.Node a, long killGraceMs) {
        a.lastSeenNanos = pool.clock.nanos();
        if (killGraceMs > 0) a.killGraceMs = killGraceMs;
        if (a.condition == AgentNodes.Condition.READY) return;
        if (a.condition == AgentNodes.Condition.LOST) LOG.info("node {} reports again", a.name);
        a.condition = AgentNodes.Condition.READY;
        a.attemptsGivenUp = false;
        pool.applySchedulable(a.name);
        pool.agents.touch(a.name);
        pool.roundDue = true;
    }

    /**
     * Nodes whose agent has had no report applied for the node-lost timeout are lost; once the agent's kill grace and
     * the margin have passed as well, their attempts are given up.
     */
    void check(long now) {
        long nowNanos = pool.clock.nanos();
        for (AgentNodes.Node n : pool.agents.all()) {
            long silentMs = n.silentMs(nowNanos);
            if (n.condition != AgentNodes.Condition.LOST && silentMs > settings.nodeLostTimeoutMs()) lost(n, silentMs, now);
            if (n.condition == AgentNodes.Condition.LOST && !n.attemptsGivenUp && silentMs >= settings.giveUpAfterMs(n.killGraceMs)) {
                giveUpAttempts(n, silentMs, now);
            }
        }
    }

    /**
     * No new work for the node, and a new lease epoch: a report its agent sent before hearing of it is not applied.
     * Its attempts stay (their agent may still be stopping them) until {@link #giveUpAttempts}.
     */
    private void lost(AgentNodes.Node n, long silentMs, long now) {
        long giveUpInMs = settings.giveUpAfterMs(n.killGraceMs) - silentMs;
        LOG.warn("node {} lost: no report for {} s; its jobs run elsewhere in {} s (its agent's lease, kill grace {} s and the margin) "
                + "unless it reports again", n.name, silentMs / 1000, Math.max(0, giveUpInMs) / 1000, n.killGraceMs / 1000);
        n.condition = AgentNodes.Condition.LOST;
        n.leaseEpoch++;
        n.progressDirty = true;
        pool.applySchedulable(n.name);
        for (ActiveJob a : List.copyOf(pool.active.values())) {
            if (!a.row.state().equals("RUNNING") || !a.nodes.contains(n.name)) continue;
            jobs.event(a, "WARNING", "node " + n.name + " lost: no report for " + silentMs / 1000 + " s; the job runs again (or fails, by its "
                    + "restart policy) in " + Math.max(0, giveUpInMs) / 1000 + " s, once its processes there must be gone, unless the node "
                    + "reports again", now);
        }
        pool.roundDue = true;
    }

    /**
     * The lost node's lease ran out, then its agent's kill grace and the margin: whatever ran there has been stopped by
     * its agent or its fence keeper. Its attempts end as LOST and their jobs are requeued or failed by restart policy.
     */
    private void giveUpAttempts(AgentNodes.Node n, long silentMs, long now) {
        String why = "node " + n.name + " lost: no report for " + silentMs / 1000 + " s";
        LOG.warn("{}; its jobs are requeued or failed by their restart policy", why);
        n.attemptsGivenUp = true;
        for (ActiveJob a : List.copyOf(pool.active.values())) {
            if (!a.row.state().equals("RUNNING") || !a.nodes.contains(n.name)) continue;
            pool.writes.add(new Write.UpdateAttempt(new AttemptUpdate(a.id(), a.row.attempt(), n.name, "LOST", null, null, now, null, why)));
            a.endedOn.add(n.name);
            jobs.lostAttempt(a, why, now);
        }
        jobs.releaseHolds(pool.stopping.nodeGone(n.name));
        pool.agents.touch(n.name);
    }
}
