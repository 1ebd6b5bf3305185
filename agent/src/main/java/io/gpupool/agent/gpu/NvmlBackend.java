package io.gpupool.agent.gpu;

import io.gpupool.agent.protocol.GpuInfo;
import io.gpupool.agent.protocol.GpuProcess;
import io.gpupool.agent.protocol.GpuSample;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * GPUs through NVML ({@link Nvml}): the same library nvidia-smi and DCGM use, without starting a process
 * per reading. Figures a GPU does not support (power on some boards, temperature in some VMs) or that the
 * agent may not read become null; a GPU that has fallen off the bus is reported with its problem instead
 * of failing the whole reading.
 */
public final class NvmlBackend implements GpuBackend {

    public static final String NAME = "nvml";
    private static final long MIB = 1024L * 1024L;

    private final Nvml nvml;
    /** Handles in index order, looked up once: they stay valid until NVML shuts down. */
    private List<MemorySegment> handles;
    private List<String> uuids;

    private NvmlBackend(Nvml nvml) {
        this.nvml = nvml;
    }

    /** Loads {@code library} (null = libnvidia-ml.so.1 from the linker's path) and initialises NVML. */
    public static NvmlBackend open(String library) throws GpuBackendException {
        return new NvmlBackend(Nvml.open(library));
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public synchronized GpuDiscovery discover() throws GpuBackendException {
        lookUpHandles();
        List<GpuInfo> gpus = new ArrayList<>();
        List<List<Integer>> peers = nvlinkPeers();
        for (int i = 0; i < handles.size(); i++) {
            MemorySegment h = handles.get(i);
            String product = nvml.name(h);
            gpus.add(GpuDiscovery.gpu(i, uuids.get(i), product, nvml.memory(h).totalBytes() / MIB, peers.get(i))
                    .withMinor(optional(() -> nvml.minorNumber(h))));
        }
        return new GpuDiscovery(NAME, nvml.driverVersion(), cudaVersion(nvml.cudaDriverVersion()), gpus);
    }

    @Override
    public synchronized List<GpuSample> sample() throws GpuBackendException {
        if (handles == null) lookUpHandles();
        List<GpuSample> out = new ArrayList<>(handles.size());
        for (int i = 0; i < handles.size(); i++) out.add(sample(i));
        return out;
    }

    private GpuSample sample(int index) throws GpuBackendException {
        MemorySegment h = handles.get(index);
        String uuid = uuids.get(index);
        try {
            Nvml.Memory mem = nvml.memory(h);
            Long watts = optional(() -> nvml.powerMilliwatts(h));
            List<Nvml.ProcessInfo> procs = optional(() -> nvml.computeProcesses(h));
            List<GpuProcess> processes = new ArrayList<>();
            if (procs != null) {
                for (Nvml.ProcessInfo p : procs) {
                    processes.add(new GpuProcess(uuid, p.pid(), p.usedBytes() == null ? null : p.usedBytes() / MIB));
                }
            }
            return new GpuSample(index, uuid, optional(() -> nvml.utilizationPercent(h)), mem.usedBytes() / MIB,
                    mem.totalBytes() / MIB, optional(() -> nvml.temperatureC(h)),
                    watts == null ? null : watts / 1000.0, processes, null);
        } catch (NvmlException e) {
            if (e.code() != Nvml.ERROR_GPU_IS_LOST) throw e;
            return new GpuSample(index, uuid, null, null, null, null, null, List.of(), e.getMessage());
        }
    }

    private void lookUpHandles() throws GpuBackendException {
        int n = nvml.deviceCount();
        List<MemorySegment> hs = new ArrayList<>(n);
        List<String> us = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            MemorySegment h = nvml.handle(i);
            hs.add(h);
            us.add(nvml.uuid(h));
        }
        handles = hs;
        uuids = us;
    }

    /**
     * Which GPUs reach which over NVLink. A link whose far end is another GPU of this machine joins the two;
     * a link to anything else is an NVSwitch (HGX boards), and all GPUs on switches reach each other.
     * A machine whose driver cannot answer gets no peers rather than a failed discovery.
     */
    private List<List<Integer>> nvlinkPeers() {
        int n = handles.size();
        List<TreeSet<Integer>> peers = new ArrayList<>();
        for (int i = 0; i < n; i++) peers.add(new TreeSet<>());
        if (nvml.hasNvlinkQueries()) {
            try {
                Map<Nvml.PciAddress, Integer> byAddress = new HashMap<>();
                for (int i = 0; i < n; i++) byAddress.put(nvml.pciAddress(handles.get(i)), i);
                TreeSet<Integer> onSwitch = new TreeSet<>();
                for (int i = 0; i < n; i++) {
                    for (Nvml.PciAddress remote : nvml.nvlinkRemotes(handles.get(i))) {
                        Integer j = byAddress.get(remote);
                        if (j == null) onSwitch.add(i);
                        else if (j != i) peers.get(i).add(j);
                    }
                }
                for (int i : onSwitch) for (int j : onSwitch) if (i != j) peers.get(i).add(j);
            } catch (GpuBackendException e) {
                peers.forEach(TreeSet::clear);
            }
        }
        return peers.stream().map(s -> (List<Integer>) List.copyOf(s)).toList();
    }

    /** NVML's 12040 as "12.4". */
    static String cudaVersion(Integer encoded) {
        if (encoded == null || encoded <= 0) return null;
        return (encoded / 1000) + "." + (encoded % 1000) / 10;
    }

    /** A reading the GPU may not support, or the agent may not be allowed to take: null instead of a failure. */
    private static <T> T optional(Reading<T> r) throws GpuBackendException {
        try {
            return r.read();
        } catch (NvmlException e) {
            if (e.code() == Nvml.ERROR_NOT_SUPPORTED || e.code() == Nvml.ERROR_NO_PERMISSION
                    || e.code() == Nvml.ERROR_FUNCTION_NOT_FOUND) {
                return null;
            }
            throw e;
        }
    }

    @FunctionalInterface
    private interface Reading<T> {
        T read() throws GpuBackendException;
    }

    @Override
    public synchronized void close() {
        nvml.close();
    }

    @Override
    public String toString() {
        return "nvml(" + nvml.library() + ")";
    }
}
