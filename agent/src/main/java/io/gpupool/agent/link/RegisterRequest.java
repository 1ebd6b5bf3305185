package io.gpupool.agent.link;

import io.gpupool.agent.gpu.NodeInventory;

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
 */
public record RegisterRequest(String nodeName, String agentVersion, NodeInventory inventory, List<RunningJobInfo> running,
                              long firstPendingSeq) {
    public RegisterRequest {
        running = List.copyOf(running);
    }

    public RegisterRequest(String nodeName, String agentVersion, NodeInventory inventory, List<RunningJobInfo> running) {
        this(nodeName, agentVersion, inventory, running, -1);
    }
}
