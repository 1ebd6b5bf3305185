package io.gpupool.model;

/**
 * Host (non-GPU) resources: CPU in thousandths of a core and RAM in MiB. A job asks for them per gang
 * replica (each replica sits on one node, like a Kubernetes pod's requests); a node offers them in its
 * {@link NodeSpec}. {@link #NONE} (the default) means the job does not ask, and then host resources never
 * decide where it goes.
 *
 * @param cpuMilli  CPU in thousandths of a core (Kubernetes' {@code cpu: 1500m} = 1500)
 * @param memoryMib host memory in MiB
 */
public record HostResources(long cpuMilli, long memoryMib) {
    public static final HostResources NONE = new HostResources(0, 0);

    public HostResources {
        if (cpuMilli < 0) throw new SpecException(null, "cpu_milli", "must be >= 0, got " + cpuMilli);
        if (memoryMib < 0) throw new SpecException(null, "memory_mib", "must be >= 0, got " + memoryMib);
    }

    /** Whether anything is asked for. */
    public boolean requested() {
        return cpuMilli > 0 || memoryMib > 0;
    }

    @Override
    public String toString() {
        return cpuMilli + "m CPU, " + memoryMib + " MiB RAM";
    }
}
