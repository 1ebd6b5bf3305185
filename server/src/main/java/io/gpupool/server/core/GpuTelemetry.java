package io.gpupool.server.core;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The latest telemetry sample of every GPU, as node agents (or the demo's fake agents) report it. Read by
 * the DCGM-style metrics and the dashboard; not stored (it is re-sent every few seconds).
 */
public final class GpuTelemetry {
    /** One GPU's readings: utilization %, framebuffer used/free MiB, power W, temperature C. */
    public record Sample(double utilPercent, long fbUsedMib, long fbFreeMib, double powerWatts, double tempC, long atMs) {}

    private final Map<String, Sample> samples = new ConcurrentHashMap<>();

    private static String key(String node, int gpu) {
        return node + "/" + gpu;
    }

    public void put(String node, int gpu, Sample s) {
        samples.put(key(node, gpu), s);
    }

    /** The latest sample, or null when none was reported. */
    public Sample get(String node, int gpu) {
        return samples.get(key(node, gpu));
    }
}
