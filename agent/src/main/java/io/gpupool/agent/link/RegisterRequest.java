package io.gpupool.agent.link;

import io.gpupool.agent.gpu.NodeInventory;

import java.util.List;

/**
 * What the agent registers with.
 *
 * @param nodeName     the node's name in the pool (the host name unless configured)
 * @param agentVersion the agent's version
 * @param inventory    GPUs, driver, CPUs, RAM
 * @param running      the attempts running on this node now (re-adopted after an agent restart), so a
 *                     restarted server can take them back without relaunching them
 */
public record RegisterRequest(String nodeName, String agentVersion, NodeInventory inventory, List<RunningJobInfo> running) {
    public RegisterRequest {
        running = List.copyOf(running);
    }
}
