package io.gpupool.agent.gpu;

import io.gpupool.model.GpuDevice;
import io.gpupool.model.NodeSpec;
import io.gpupool.model.SpecException;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;

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

    /** This machine with the GPUs {@code discovery} found. */
    public static NodeInventory of(GpuDiscovery discovery) {
        return new NodeInventory(localHostname(), Runtime.getRuntime().availableProcessors(), localMemoryMib(),
                discovery.backend(), discovery.driverVersion(), discovery.cudaVersion(), discovery.gpus());
    }

    /**
     * The node as the engine sees it: every GPU must be a catalog model (an unknown card is refused with
     * its index and product string, not guessed), NVLink domains are the groups of GPUs joined by NVLink.
     */
    public NodeSpec toNodeSpec(String nodeName, double memoryOversubscription, int splitCount, Map<String, String> labels) {
        List<GpuDevice> devices = new ArrayList<>();
        for (GpuInfo g : gpus) {
            devices.add(new GpuDevice(g.index(), g.uuid(), g.model().orElseThrow(() -> new SpecException(
                    "node " + nodeName + " gpu " + g.index(), "model",
                    "the GPU catalog does not know '" + g.productName() + "'; see 'gpupool catalog'")), true));
        }
        return new NodeSpec(nodeName, devices, cpuCount * 1000L, memoryMib, nvlinkDomains(), memoryOversubscription,
                splitCount, labels);
    }

    /** Groups of GPUs connected by NVLink (connected components of the peer graph), singletons left out. */
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

    public static String localHostname() {
        try {
            String h = Files.readString(Path.of("/proc/sys/kernel/hostname")).trim();
            if (!h.isEmpty()) return h;
        } catch (IOException | RuntimeException e) {
            // not Linux: ask the resolver below
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return "localhost";
        }
    }

    static long localMemoryMib() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getTotalMemorySize() / (1024 * 1024);
        }
        return Runtime.getRuntime().maxMemory() / (1024 * 1024);
    }
}
