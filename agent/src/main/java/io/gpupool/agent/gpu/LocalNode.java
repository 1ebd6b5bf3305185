package io.gpupool.agent.gpu;

import io.gpupool.agent.protocol.NodeInventory;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;

/** This machine as its agent registers it: host name, CPUs and RAM, with the GPUs a backend found. */
public final class LocalNode {
    private LocalNode() {
    }

    /** This machine with the GPUs {@code discovery} found. */
    public static NodeInventory inventory(GpuDiscovery discovery) {
        return new NodeInventory(hostname(), Runtime.getRuntime().availableProcessors(), memoryMib(),
                discovery.backend(), discovery.driverVersion(), discovery.cudaVersion(), discovery.gpus());
    }

    public static String hostname() {
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

    static long memoryMib() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getTotalMemorySize() / (1024 * 1024);
        }
        return Runtime.getRuntime().maxMemory() / (1024 * 1024);
    }
}
