package io.gpupool.agent.protocol;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

/**
 * What a node registers with: the machine (host name, CPUs, RAM) and what GPU discovery found.
 *
 * @param hostname      the machine's host name
 * @param cpuCount      logical CPUs available to the agent
 * @param memoryMib     RAM available to the agent (the container's limit inside a container)
 * @param backend       the discovery backend
 * @param driverVersion NVIDIA driver version, null where unknown
 * @param cudaVersion   CUDA version the driver supports, null where unknown
 * @param gpus          the GPUs in index order
 */
public record NodeInventory(String hostname, int cpuCount, long memoryMib, String backend, String driverVersion,
                            String cudaVersion, List<GpuInfo> gpus) {

    public NodeInventory {
        gpus = List.copyOf(gpus);
    }

    /**
     * Groups of GPUs connected by NVLink (connected components of the peer graph), singletons left out: what the
     * inventory's peer lists say, read the same way by the agent and the server.
     */
    public List<List<Integer>> nvlinkDomains() {
        BitSet seen = new BitSet();
        List<List<Integer>> domains = new ArrayList<>();
        for (GpuInfo g : gpus) {
            if (seen.get(g.index()) || g.nvlinkPeers().isEmpty()) continue;
            List<Integer> domain = new ArrayList<>();
            List<Integer> frontier = new ArrayList<>(List.of(g.index()));
            seen.set(g.index());
            while (!frontier.isEmpty()) {
                int i = frontier.removeLast();
                domain.add(i);
                for (int p : gpus.get(i).nvlinkPeers()) {
                    if (p < gpus.size() && !seen.get(p)) {
                        seen.set(p);
                        frontier.add(p);
                    }
                }
            }
            domain.sort(null);
            domains.add(List.copyOf(domain));
        }
        return domains;
    }
}
