package io.gpupool.agent.protocol;

import java.util.List;

/**
 * What the agent registers with.
 *
 * @param nodeName          the node's name in the pool (the host name unless configured)
 * @param agentVersion      the agent's version
 * @param inventory         GPUs, driver, CPUs, RAM
 * @param running           the attempts running on this node now (re-adopted after an agent restart), so a
 *                          restarted server can take them back without relaunching them
 * @param firstPendingSeq   the seq of the oldest status report not yet acknowledged (the next seq when none
 *                          is pending): the server takes reports from there on, even if it had acknowledged
 *                          higher seqs from an earlier agent with a fresh work directory; -1: not given
 * @param killGraceMs       the agent's SIGTERM-to-SIGKILL grace: a job it fences is gone this long (plus the
 *                          server's margin) after its lease runs out, so the server waits that long before it
 *                          re-places the job (0: not given; the server assumes the default, 10 s)
 * @param confinement       what the node enforces on its jobs (cgroup mode, enforced and missing controls); null from
 *                          an older agent
 * @param accounts          whether jobs run as their owners' accounts here (absent: an older agent, which does not)
 */
public record RegisterRequest(String nodeName, String agentVersion, NodeInventory inventory, List<RunningJobInfo> running,
                              long firstPendingSeq, long killGraceMs, NodeConfinement confinement, AccountIsolation accounts) {
    public RegisterRequest {
        running = List.copyOf(running);
        if (accounts == null) accounts = AccountIsolation.UNKNOWN;
    }

    public RegisterRequest(String nodeName, String agentVersion, NodeInventory inventory, List<RunningJobInfo> running) {
        this(nodeName, agentVersion, inventory, running, -1, 0, null, null);
    }

    public RegisterRequest(String nodeName, String agentVersion, NodeInventory inventory, List<RunningJobInfo> running,
                           long firstPendingSeq, long killGraceMs) {
        this(nodeName, agentVersion, inventory, running, firstPendingSeq, killGraceMs, null, null);
    }
}
